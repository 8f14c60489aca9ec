#include "ir/builder.h"

#include "synapse/error.h"

namespace synapse::ir {

GraphBuilder::GraphBuilder(Dim tokens) : tokens_(std::move(tokens)) {}

void GraphBuilder::bind(const std::string& bound, int64_t value) { graph_.bounds[bound] = value; }

ValueId GraphBuilder::add_input(EntryKind kind) {
  const ValueId value{static_cast<uint32_t>(graph_.values.size())};
  const NodeId node{static_cast<uint32_t>(graph_.nodes.size())};
  graph_.values.push_back(Value{ValueType{DType::I32, {tokens_}}, node, {}});
  graph_.nodes.push_back(Node{Input{kind}, {}, value, {}});
  return value;
}

void GraphBuilder::add_output(OutputKind kind, ValueId value) { apply(Output{kind}, {value}); }

TensorId GraphBuilder::add_weight(WeightDescriptor descriptor) {
  graph_.weights.push_back(std::move(descriptor));
  return TensorId{static_cast<uint32_t>(graph_.weights.size() - 1)};
}

SlotId GraphBuilder::add_slot(std::string name, ValueType type) {
  graph_.slots.push_back(StateSlot{std::move(name), std::move(type)});
  return SlotId{static_cast<uint32_t>(graph_.slots.size() - 1)};
}

void GraphBuilder::set_name(ValueId value, const std::string& name) {
  Value& v = graph_.values.at(value.index);
  v.name = name;
  graph_.nodes.at(v.producer.index).name = name;
}

ValueId GraphBuilder::embedding(TensorId table, ValueId ids) { return apply(Embedding{table}, {ids}); }
ValueId GraphBuilder::matmul(ValueId x, TensorId weight, std::optional<TensorId> bias) {
  return apply(MatMul{weight, bias}, {x});
}
ValueId GraphBuilder::add(ValueId a, ValueId b) { return apply(Add{}, {a, b}); }
ValueId GraphBuilder::mul(ValueId a, ValueId b) { return apply(Mul{}, {a, b}); }
ValueId GraphBuilder::rms_norm(ValueId x, TensorId weight, float eps) { return apply(RmsNorm{weight, eps}, {x}); }
ValueId GraphBuilder::layer_norm(ValueId x, TensorId weight, std::optional<TensorId> bias, float eps) {
  return apply(LayerNorm{weight, bias, eps}, {x});
}
ValueId GraphBuilder::rope(ValueId x, ValueId positions, const Rope& attributes) {
  return apply(attributes, {x, positions});
}
ValueId GraphBuilder::state_append(SlotId slot, ValueId x, ValueId positions) {
  return apply(StateAppend{slot}, {x, positions});
}
ValueId GraphBuilder::attention(ValueId q, ValueId k, ValueId v, ValueId positions,
                                const CausalAttention& attributes) {
  return apply(attributes, {q, k, v, positions});
}
ValueId GraphBuilder::silu(ValueId x) { return apply(Silu{}, {x}); }
ValueId GraphBuilder::sigmoid(ValueId x) { return apply(Sigmoid{}, {x}); }
ValueId GraphBuilder::gelu(ValueId x, GeluApproximation approximation) { return apply(Gelu{approximation}, {x}); }
ValueId GraphBuilder::swiglu(ValueId gate, ValueId up) { return apply(SwiGlu{}, {gate, up}); }
ValueId GraphBuilder::softmax(ValueId x) { return apply(Softmax{}, {x}); }
ValueId GraphBuilder::top_k_route(ValueId scores, const TopKRoute& attributes) { return apply(attributes, {scores}); }
ValueId GraphBuilder::merge(MergeMode mode, std::vector<ValueId> values) {
  return apply(Merge{mode}, std::move(values));
}
ValueId GraphBuilder::logits(ValueId x, TensorId weight) { return apply(Logits{weight}, {x}); }

ValueId GraphBuilder::apply(Op op, std::vector<ValueId> operands) {
  const NodeId node{static_cast<uint32_t>(graph_.nodes.size())};
  const bool entry = is_entry(op);
  graph_.nodes.push_back(Node{std::move(op), std::move(operands), std::nullopt, {}});
  std::optional<ValueType> type;
  try {
    type = infer_result(graph_, node);
  } catch (...) {
    graph_.nodes.pop_back();  // leave the builder as it was
    throw;
  }
  if (!entry && open_region_) graph_.regions[open_region_->index].members.push_back(node);
  if (!type) return ValueId{};
  const ValueId value{static_cast<uint32_t>(graph_.values.size())};
  graph_.values.push_back(Value{std::move(*type), node, {}});
  graph_.nodes.back().result = value;
  return value;
}

RegionId GraphBuilder::begin_region(RegionKind kind, RegionActivation activation) {
  if (open_region_)
    throw Error(ErrorKind::InvalidValue, "begin_region: region " + to_string(kind) + " opened inside region " +
                                             to_string(graph_.regions[open_region_->index].kind));
  graph_.regions.push_back(Region{kind, {}, {}, std::move(activation)});
  open_region_ = RegionId{static_cast<uint32_t>(graph_.regions.size() - 1)};
  return *open_region_;
}

void GraphBuilder::end_region() {
  if (!open_region_) throw Error(ErrorKind::InvalidValue, "end_region: no region is open");
  open_region_.reset();
}

Graph GraphBuilder::finish_unverified() && {
  if (open_region_)
    throw Error(ErrorKind::InvalidValue,
                "finish: region " + to_string(graph_.regions[open_region_->index].kind) + " is still open");
  derive_boundaries(graph_);
  return std::move(graph_);
}

Graph GraphBuilder::finish(const VerifyOptions& options) && {
  Graph graph = std::move(*this).finish_unverified();
  verify(graph, options);
  return graph;
}

}  // namespace synapse::ir
