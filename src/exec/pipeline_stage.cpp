#include "exec/pipeline_stage.h"

#include <algorithm>
#include <numeric>

#include "synapse/error.h"

namespace synapse::exec {
namespace {

[[noreturn]] void bad_ranges(const std::string& text, const std::string& why) {
  throw Error(ErrorKind::Usage, "--ranks-layers '" + text + "': " + why + " (e.g. 0-11,12-23)");
}

uint32_t parse_layer(const std::string& text, const std::string& item) {
  if (item.empty() || item.size() > 9 || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
    bad_ranges(text, "'" + item + "' is not a layer number");
  return static_cast<uint32_t>(std::stoul(item));
}

}  // namespace

LayerDrop plan_stage(const ir::Graph& graph, StageRange range) {
  const uint32_t n_layer = layer_count(graph);
  if (range.first_layer >= range.end_layer || range.end_layer > n_layer)
    throw Error(ErrorKind::Usage, "a stage of layers " + std::to_string(range.first_layer) + ".." +
                                      std::to_string(range.end_layer) + " (exclusive) of a model of " +
                                      std::to_string(n_layer) + " layers");
  LayerDrop drop;
  drop.placed = true;
  drop.hidden_in = range.first_layer > 0;
  drop.hidden_out = range.end_layer < n_layer;
  for (uint32_t layer = 0; layer < n_layer; ++layer)
    if (layer < range.first_layer || layer >= range.end_layer) drop.layers.push_back(layer);
  if (drop.layers.empty()) return drop;  // the whole model: nothing placed elsewhere
  std::vector<bool> dropped(graph.regions.size(), false), absent(graph.regions.size(), false);
  std::vector<ir::ValueId> handed_on;
  for (size_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    const ir::RegionKindTag tag = region.kind.tag;
    if (in_layer(tag)) {
      dropped[r] = region.kind.layer < range.first_layer || region.kind.layer >= range.end_layer;
    } else if ((tag == ir::RegionKindTag::Embedding && drop.hidden_in) ||
               (tag == ir::RegionKindTag::Logits && drop.hidden_out)) {
      dropped[r] = absent[r] = true;
      // The output head's input is what this stage hands on.
      if (tag == ir::RegionKindTag::Logits) handed_on = region.boundary.inputs;
    }
  }
  plan_dropped_regions(graph, dropped, absent, handed_on, drop);
  return drop;
}

std::vector<StageRange> parse_stage_ranges(const std::string& text, uint32_t n_layer) {
  std::vector<StageRange> ranges;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) bad_ranges(text, "'" + item + "' is not FIRST-LAST");
    const uint32_t first = parse_layer(text, item.substr(0, dash)), last = parse_layer(text, item.substr(dash + 1));
    if (last < first) bad_ranges(text, "'" + item + "' ends before it starts");
    const uint32_t expected = ranges.empty() ? 0 : ranges.back().end_layer;
    if (first != expected) bad_ranges(text, "'" + item + "' should start at layer " + std::to_string(expected));
    ranges.push_back({first, last + 1});
    at = comma + 1;
  }
  if (ranges.back().end_layer != n_layer)
    bad_ranges(text, "the ranges end at layer " + std::to_string(ranges.back().end_layer - 1) + "; the model has " +
                         std::to_string(n_layer) + " layers (0.." + std::to_string(n_layer - 1) + ")");
  return ranges;
}

std::vector<StageRange> split_stages(const ir::Graph& graph, int stages, SplitBy by) {
  const uint32_t n_layer = layer_count(graph);
  if (stages < 1 || static_cast<uint32_t>(stages) > n_layer)
    throw Error(ErrorKind::Usage, std::to_string(stages) + " stages for a model of " + std::to_string(n_layer) +
                                      " layers: each stage needs one at least");
  // Weight bytes per layer (1 each when splitting by count); the output head
  // weighs on the last layer's stage. The embedding weighs nothing: a step
  // reads a row of it per token (a tied output head reads it all, on the
  // last stage).
  std::vector<double> cost(n_layer, 1.0);
  if (by == SplitBy::Bytes) {
    std::fill(cost.begin(), cost.end(), 0.0);
    std::vector<bool> counted(graph.weights.size(), false);
    for (const ir::Region& region : graph.regions) {
      if (region.kind.tag == ir::RegionKindTag::Embedding) continue;
      const uint32_t layer = in_layer(region.kind.tag) ? region.kind.layer : n_layer - 1;
      for (ir::TensorId w : region.boundary.weights) {
        if (counted[w.index]) continue;
        counted[w.index] = true;
        cost[layer] += static_cast<double>(graph.weights[w.index].length);
      }
    }
  }
  const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
  std::vector<StageRange> ranges;
  double done = 0;
  uint32_t first = 0;
  for (int s = 0; s < stages; ++s) {
    const uint32_t left_stages = static_cast<uint32_t>(stages - s - 1);
    uint32_t end = first + 1;  // at least one layer, and one left for each later stage
    done += cost[first];
    const double target = total * (s + 1) / stages;
    while (end + left_stages < n_layer && (s == stages - 1 || done + cost[end] / 2 <= target)) done += cost[end++];
    ranges.push_back({first, end});
    first = end;
  }
  return ranges;
}

}  // namespace synapse::exec
