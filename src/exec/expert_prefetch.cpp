#include "exec/expert_prefetch.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <variant>

#include "encoding/encoding.h"

namespace synapse::exec {
namespace {

struct RouterParts {
  ir::RegionId region;
  const ir::MatMul* matmul = nullptr;
  ir::ValueId input{};  // the MatMul's
  ir::ValueId route{};  // the TopKRoute's result
  uint32_t k = 0;
};

RouterParts router_parts(const ir::Graph& graph, const ir::Region& region, ir::RegionId id) {
  RouterParts parts{id};
  for (ir::NodeId member : region.members) {
    const ir::Node& node = graph.node(member);
    if (const auto* matmul = std::get_if<ir::MatMul>(&node.op); matmul && !parts.matmul) {
      parts.matmul = matmul;
      parts.input = node.operands[0];
    } else if (const auto* route = std::get_if<ir::TopKRoute>(&node.op)) {
      parts.route = *node.result;
      parts.k = route->k;
    }
  }
  return parts;
}

}  // namespace

ExpertPrefetch::ExpertPrefetch(const ir::Graph& graph, const memory::ResidencyPlan& plan)
    : plan_(plan), guess_of_(graph.regions.size(), -1) {
  std::map<uint32_t, RouterParts> routers;  // by layer
  for (uint32_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    if (region.kind.tag != ir::RegionKindTag::Router) continue;
    const RouterParts parts = router_parts(graph, region, ir::RegionId{r});
    if (parts.matmul && parts.route.valid()) routers[region.kind.layer] = parts;
  }
  std::map<uint32_t, std::map<uint32_t, ir::RegionId>> experts;  // by route value, then slot
  for (uint32_t r = 0; r < graph.regions.size(); ++r)
    if (const auto* slot = std::get_if<ir::RouteSlot>(&graph.regions[r].activation.decision))
      experts[slot->router.index][slot->slot] = ir::RegionId{r};
  size_t widest = 0;
  for (const auto& [layer, parts] : routers) {
    const auto next = routers.find(layer + 1);
    if (next == routers.end()) continue;
    const ir::WeightDescriptor& w = graph.weight(next->second.matmul->weight);
    Guess guess{parts.input, next->second.matmul->weight, next->second.k, {}};
    for (const auto& [slot, region] : experts[next->second.route.index]) {
      if (guess.next_experts.size() <= slot) guess.next_experts.resize(slot + 1);
      guess.next_experts[slot] = region;
    }
    if (guess.next_experts.size() != static_cast<size_t>(w.shape[0])) continue;  // not one region per expert
    guess_of_[parts.region.index] = static_cast<int32_t>(guesses_.size());
    guesses_.push_back(std::move(guess));
    widest = std::max(widest, static_cast<size_t>(w.shape[0]));
    row_.resize(std::max(row_.size(), static_cast<size_t>(w.shape[1])));
  }
  scores_.resize(widest);
  order_.resize(widest);
}

void ExpertPrefetch::after(ir::RegionId region, const StepContext& ctx, memory::WeightResidency& residency) {
  const int32_t index = guess_of_[region.index];
  if (index < 0) return;
  const Guess& guess = guesses_[static_cast<size_t>(index)];
  const memory::WeightChunks& chunks = plan_.weights[guess.next_weight.index];
  for (uint32_t c = chunks.first; c < chunks.first + chunks.count; ++c)
    if (!plan_.chunks[c].pinned) return;  // its weights may not be resident: no guess
  const TensorRef& x = ctx.values[guess.input.index];
  if (!x.present) return;
  const float* last = x.data + (x.rows - 1) * x.cols;
  const ref::EncodedMatrix& w = ctx.weights.matrix(guess.next_weight);
  const auto experts = static_cast<uint32_t>(w.rows);
  for (uint32_t e = 0; e < experts; ++e) {
    dequantize_row(w.encoding, w.row(e), row_.data(), w.cols);
    scores_[e] = std::inner_product(row_.begin(), row_.begin() + w.cols, last, 0.0f);
  }
  // The router's softmax keeps the order of the scores: the top k of these.
  std::iota(order_.begin(), order_.begin() + experts, 0u);
  const uint32_t k = std::min(guess.k, experts);
  std::partial_sort(order_.begin(), order_.begin() + k, order_.begin() + experts,
                    [&](uint32_t a, uint32_t b) { return scores_[a] > scores_[b] || (scores_[a] == scores_[b] && a < b); });
  for (uint32_t i = 0; i < k; ++i) residency.prefetch(plan_.region_chunks[guess.next_experts[order_[i]].index]);
}

}  // namespace synapse::exec
