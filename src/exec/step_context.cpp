#include "exec/step_context.h"

#include <algorithm>
#include <variant>

#include "kernels/cpu/matmul.h"

namespace synapse::exec {

Extent extent_of(const ir::ValueType& type, int64_t tokens) {
  const auto size = [&](const ir::Dim& dim) { return dim.is_symbolic() ? tokens : dim.size; };
  if (type.shape.size() == 1) return {size(type.shape[0]), 1};
  Extent extent{1, type.shape.empty() ? 1 : size(type.shape.back())};
  for (size_t i = 0; i + 1 < type.shape.size(); ++i) extent.rows *= size(type.shape[i]);
  return extent;
}

StepScratch::StepScratch(const ir::Graph& graph, const WeightTable& weights, int64_t max_ctx)
    : weight_row(static_cast<size_t>(weights.max_matrix_cols())), scores(static_cast<size_t>(max_ctx)) {
  int64_t experts = 0, rope_pairs = 0;
  for (const ir::Node& node : graph.nodes) {
    if (std::holds_alternative<ir::TopKRoute>(node.op))
      experts = std::max(experts, graph.value(node.operands[0]).type.shape.back().size);
    if (const auto* rope = std::get_if<ir::Rope>(&node.op))
      rope_pairs = std::max<int64_t>(rope_pairs, rope->rotary_dim / 2);
  }
  route.resize(static_cast<size_t>(2 * experts));
  const auto chunk = graph.bounds.find("chunk");
  if (chunk != graph.bounds.end()) {
    activations.resize(cpu::matmul_scratch_bytes(chunk->second, weights.max_matrix_cols()));
    if (rope_pairs > 0) rope = cpu::RopeTable(chunk->second, rope_pairs);
  }
}

}  // namespace synapse::exec
