#include "ir/attributes.h"

#include <iterator>

#include "ir/overloaded.h"

namespace synapse::ir {

bool is_causal(const TopKRoute& route) { return route.scope == RouteScope::PerToken && !route.capacity; }

const char* op_name(const Op& op) {
  static constexpr const char* kNames[] = {
      "Input", "Output", "Embedding", "MatMul", "Add",  "Mul",    "RmsNorm", "LayerNorm", "Rope",
      "StateAppend", "CausalAttention", "Silu", "Gelu", "SwiGlu", "Softmax", "TopKRoute", "Merge", "Logits",
      "Sigmoid"};
  static_assert(std::size(kNames) == std::variant_size_v<Op>);
  return kNames[op.index()];
}

bool is_entry(const Op& op) { return std::holds_alternative<Input>(op) || std::holds_alternative<Output>(op); }

std::vector<TensorId> weights_of(const Op& op) {
  auto with_optional = [](TensorId first, const std::optional<TensorId>& second) {
    std::vector<TensorId> out{first};
    if (second) out.push_back(*second);
    return out;
  };
  return std::visit(
      Overloaded{
          [](const Embedding& a) { return std::vector{a.table}; },
          [&](const MatMul& a) { return with_optional(a.weight, a.bias); },
          [](const RmsNorm& a) { return std::vector{a.weight}; },
          [&](const LayerNorm& a) { return with_optional(a.weight, a.bias); },
          [](const Rope& a) {
            if (auto* llama3 = std::get_if<RopeLlama3Scaling>(&a.scaling)) return std::vector{llama3->freq_factors};
            return std::vector<TensorId>{};
          },
          [](const Logits& a) { return std::vector{a.weight}; },
          [](const auto&) { return std::vector<TensorId>{}; },
      },
      op);
}

}  // namespace synapse::ir
