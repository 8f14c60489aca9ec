#include "exec/layer_drop.h"

#include <algorithm>

#include "synapse/error.h"

namespace synapse::exec {
namespace {

bool contains(const std::vector<ir::ValueId>& values, ir::ValueId v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// The bypass of a region whose output is its input plus something (a
// residual addition): the input the output falls back to.
std::optional<ir::ValueId> residual_input(const ir::Graph& graph, const ir::Region& region, ir::ValueId output,
                                          const std::vector<int64_t>& producer) {
  const int64_t node = producer[output.index];
  if (node < 0) return std::nullopt;
  const ir::Node& add = graph.nodes[static_cast<size_t>(node)];
  if (!std::holds_alternative<ir::Add>(add.op)) return std::nullopt;
  for (ir::ValueId operand : add.operands)
    if (contains(region.boundary.inputs, operand) && graph.value(operand).type == graph.value(output).type)
      return operand;
  return std::nullopt;
}

}  // namespace

bool in_layer(ir::RegionKindTag tag) {
  using ir::RegionKindTag;
  return tag == RegionKindTag::Attention || tag == RegionKindTag::Mlp || tag == RegionKindTag::Router ||
         tag == RegionKindTag::Expert || tag == RegionKindTag::Merge;
}

uint32_t layer_count(const ir::Graph& graph) {
  uint32_t n_layer = 0;
  for (const ir::Region& region : graph.regions)
    if (in_layer(region.kind.tag)) n_layer = std::max(n_layer, region.kind.layer + 1);
  return n_layer;
}

LayerDrop plan_layer_drop(const ir::Graph& graph, std::span<const uint32_t> layers) {
  LayerDrop drop;
  drop.layers.assign(layers.begin(), layers.end());
  std::sort(drop.layers.begin(), drop.layers.end());
  drop.layers.erase(std::unique(drop.layers.begin(), drop.layers.end()), drop.layers.end());
  const uint32_t n_layer = layer_count(graph);
  for (uint32_t layer : drop.layers)
    if (layer >= n_layer)
      throw Error(ErrorKind::Usage, "cannot drop layer " + std::to_string(layer) + ": the model has " +
                                        std::to_string(n_layer) + " layers (0.." + std::to_string(n_layer - 1) + ")");
  if (drop.empty()) return drop;
  std::vector<bool> dropped(graph.regions.size(), false);
  for (size_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    dropped[r] = in_layer(region.kind.tag) && std::binary_search(drop.layers.begin(), drop.layers.end(), region.kind.layer);
  }
  plan_dropped_regions(graph, dropped, std::vector<bool>(graph.regions.size(), false), {}, drop);
  return drop;
}

void plan_dropped_regions(const ir::Graph& graph, const std::vector<bool>& dropped, const std::vector<bool>& absent,
                          std::span<const ir::ValueId> handed_on, LayerDrop& drop) {
  const size_t n_regions = graph.regions.size();
  std::vector<int64_t> region_of(graph.nodes.size(), -1);
  std::vector<int64_t> producer(graph.values.size(), -1);
  for (size_t r = 0; r < n_regions; ++r)
    for (ir::NodeId id : graph.regions[r].members) region_of[id.index] = static_cast<int64_t>(r);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (graph.nodes[n].result) producer[graph.nodes[n].result->index] = static_cast<int64_t>(n);

  // Values the running part of the model reads; a dropped region must
  // still provide those (by its bypass), which makes its input needed too.
  std::vector<bool> needed(graph.values.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (region_of[n] < 0 || !dropped[static_cast<size_t>(region_of[n])])
      for (ir::ValueId operand : graph.nodes[n].operands) needed[operand.index] = true;
  for (ir::ValueId value : handed_on) needed[value.index] = true;
  drop.regions.resize(n_regions);
  for (size_t r = n_regions; r-- > 0;) {  // consumers come after producers
    if (!dropped[r]) continue;
    if (absent[r]) {  // its outputs come from elsewhere, or go nowhere here
      drop.regions[r] = ir::OutputsAbsent{};
      continue;
    }
    const ir::Region& region = graph.regions[r];
    std::vector<ir::ValueId> kept;
    for (ir::ValueId output : region.boundary.outputs)
      if (needed[output.index]) kept.push_back(output);
    if (kept.empty()) {
      drop.regions[r] = ir::OutputsAbsent{};
      continue;
    }
    const std::optional<ir::ValueId> input =
        kept.size() == 1 ? residual_input(graph, region, kept[0], producer) : std::nullopt;
    if (!input)
      throw Error(ErrorKind::InvalidValue, "cannot drop layer " + std::to_string(region.kind.layer) + ": its region " +
                                               ir::to_string(region.kind) +
                                               " hands the rest of the model more than the residual stream");
    drop.regions[r] = ir::Bypass{*input, kept[0]};
    needed[input->index] = true;
  }

  drop.weights.assign(graph.weights.size(), false);
  drop.slots.assign(graph.slots.size(), false);
  for (size_t r = 0; r < n_regions; ++r) {
    if (!dropped[r]) continue;
    for (ir::TensorId w : graph.regions[r].boundary.weights) drop.weights[w.index] = true;
    for (ir::SlotId s : graph.regions[r].boundary.state_writes) drop.slots[s.index] = true;
  }
  for (size_t r = 0; r < n_regions; ++r) {  // shared with a running region: kept
    if (dropped[r]) continue;
    const ir::RegionBoundary& b = graph.regions[r].boundary;
    for (ir::TensorId w : b.weights) drop.weights[w.index] = false;
    for (ir::SlotId s : b.state_writes) drop.slots[s.index] = false;
    for (ir::SlotId s : b.state_reads) drop.slots[s.index] = false;
  }
}

std::string LayerDrop::mode() const {
  if (empty() || placed) return "";
  std::string text = numerical_mode();
  text += " (layer";
  text += layers.size() > 1 ? "s " : " ";
  for (size_t i = 0; i < layers.size(); ++i) text += (i ? ", " : "") + std::to_string(layers[i]);
  return text + " dropped)";
}

std::vector<uint32_t> parse_layer_list(const std::string& text) {
  std::vector<uint32_t> layers;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const bool digits = !item.empty() && item.size() <= 9 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      throw Error(ErrorKind::Usage, "--drop-layers takes comma-separated layer numbers (as 10,11), not '" + text + "'");
    layers.push_back(static_cast<uint32_t>(std::stoul(item)));
    at = comma + 1;
  }
  return layers;
}

}  // namespace synapse::exec
