#include "calibrate/imatrix_collector.h"

#include <algorithm>
#include <map>
#include <optional>

#include "model/moe_builder.h"


namespace synapse::calibrate {
namespace {

// The weight a node multiplies its input by, for MatMul and Logits.
std::optional<ir::TensorId> product_weight(const ir::Node& node) {
  if (const auto* m = std::get_if<ir::MatMul>(&node.op)) return m->weight;
  if (const auto* l = std::get_if<ir::Logits>(&node.op)) return l->weight;
  return std::nullopt;
}

}  // namespace

ImatrixCollector::ImatrixCollector(const ir::Graph& graph, bool process_output) : graph_(graph) {
  const auto wanted = [&](const std::string& base) {
    return base.starts_with("blk.") || (process_output && base == "output.weight");
  };
  std::map<std::string, uint32_t> entry_of;
  // Entries first, so each knows its number of experts before any product.
  for (const ir::WeightDescriptor& w : graph.weights) {
    const ExpertViewName name = split_expert_view(w.name);
    if (!wanted(name.tensor) || w.shape.size() != 2) continue;
    auto [it, added] = entry_of.emplace(name.tensor, static_cast<uint32_t>(entries_.size()));
    if (added) entries_.push_back({name.tensor, w.shape[1], {}, {}});
    Entry& e = entries_[it->second];
    e.counts.resize(std::max<size_t>(e.counts.size(), name.expert + 1), 0);
  }
  for (Entry& e : entries_) e.sum2.assign(e.counts.size() * static_cast<size_t>(e.cols), 0.0);

  products_.resize(graph.regions.size());
  for (size_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    const bool routed = std::holds_alternative<ir::RouteSlot>(region.activation.decision);
    for (ir::NodeId id : region.members) {
      const ir::Node& node = graph.node(id);
      const std::optional<ir::TensorId> weight = product_weight(node);
      if (!weight || node.operands.empty()) continue;
      const ExpertViewName name = split_expert_view(graph.weight(*weight).name);
      const auto it = entry_of.find(name.tensor);
      if (it == entry_of.end()) continue;
      const auto& inputs = region.boundary.inputs;
      const bool region_input = std::find(inputs.begin(), inputs.end(), node.operands[0]) != inputs.end();
      products_[r].push_back({id, it->second, name.expert, routed && region_input});
    }
  }
}

void ImatrixCollector::observe(const exec::RegionEvent& event, std::span<const exec::TensorRef> values) {
  if (event.outcome != exec::RegionOutcome::Executed) return;
  const ir::Region& region = graph_.regions[event.region.index];
  const auto* route = std::get_if<ir::RouteSlot>(&region.activation.decision);
  for (const Product& product : products_[event.region.index]) {
    const exec::TensorRef& x = values[graph_.node(product.node).operands[0].index];
    if (!x.present || x.data == nullptr) continue;
    const exec::TensorRef* gates = product.routed_input ? &values[route->router.index] : nullptr;
    add_rows(product, x, gates, product.routed_input ? route->slot : 0);
  }
}

void ImatrixCollector::add_rows(const Product& product, const exec::TensorRef& x, const exec::TensorRef* gates,
                                uint32_t slot) {
  Entry& e = entries_[product.entry];
  if (x.cols != e.cols) return;  // not the weight's input (cannot happen in a verified graph)
  double* sum2 = e.sum2.data() + static_cast<size_t>(product.expert) * static_cast<size_t>(e.cols);
  for (int64_t t = 0; t < x.rows; ++t) {
    // Inside a routed region, products see the routed tokens only.
    if (gates && gates->data[t * gates->cols + slot] == 0.0f) continue;
    const float* row = x.data + t * x.cols;
    for (int64_t j = 0; j < e.cols; ++j) sum2[j] += static_cast<double>(row[j]) * row[j];
    ++e.counts[product.expert];
  }
}

quant::Imatrix ImatrixCollector::result(std::vector<std::string> datasets, uint32_t chunk_count,
                                        uint32_t chunk_size) const {
  quant::Imatrix m;
  m.datasets = std::move(datasets);
  m.chunk_count = chunk_count;
  m.chunk_size = chunk_size;
  for (const Entry& e : entries_) {
    if (std::all_of(e.counts.begin(), e.counts.end(), [](uint64_t c) { return c == 0; })) continue;
    quant::ImatrixEntry& out = m.entries[e.name];
    out.in_sum2.assign(e.sum2.begin(), e.sum2.end());
    out.counts.assign(e.counts.begin(), e.counts.end());
  }
  return m;
}

}  // namespace synapse::calibrate
