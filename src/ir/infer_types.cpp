// The type rules of every operation: operand counts, dtypes, shapes, weight
// shapes and attribute domains, and the type of the value each op defines.
#include <cmath>

#include "ir/verify_phases.h"

namespace synapse::ir {
namespace {

class OpRules {
 public:
  OpRules(const Graph& graph, NodeId id) : graph_(graph), id_(id), node_(graph.node(id)) {}

  std::optional<ValueType> infer() const {
    return std::visit([&](const auto& attributes) { return rule(attributes); }, node_.op);
  }

 private:
  [[noreturn]] void reject(VerifyError error, const std::string& message) const {
    fail(error, std::string(op_name(node_.op)) + (node_.name.empty() ? "" : " '" + node_.name + "'") + ": " + message,
         id_);
  }
  void require(bool ok, VerifyError error, const std::string& message) const {
    if (!ok) reject(error, message);
  }
  void require_positive(float x, const char* what) const {
    require(std::isfinite(x) && x > 0, VerifyError::InvalidAttribute, std::string(what) + " must be finite and > 0");
  }

  void operand_count(size_t n) const {
    require(node_.operands.size() == n, VerifyError::OperandCount,
            "takes " + std::to_string(n) + " operands, has " + std::to_string(node_.operands.size()));
  }
  const ValueType& operand(size_t i) const {
    ValueId id = node_.operands[i];
    require(id.index < graph_.values.size(), VerifyError::UnknownReference, "operand names no value");
    return graph_.values[id.index].type;
  }
  // A float operand of the given rank (0: any rank >= 1).
  const ValueType& activation(size_t i, size_t rank = 0) const {
    const ValueType& type = operand(i);
    require(is_float(type.dtype), VerifyError::OperandDType,
            "operand " + std::to_string(i) + " must be float, is " + to_string(type.dtype));
    require(rank ? type.shape.size() == rank : !type.shape.empty(), VerifyError::OperandShape,
            "operand " + std::to_string(i) + " has rank " + std::to_string(type.shape.size()));
    return type;
  }
  void same_type(const ValueType& a, const ValueType& b, const std::string& what) const {
    require(a.dtype == b.dtype, VerifyError::OperandDType, what + ": " + to_string(a) + " vs " + to_string(b));
    require(a.shape == b.shape, VerifyError::OperandShape, what + ": " + to_string(a) + " vs " + to_string(b));
  }
  void dim_is(const Dim& dim, int64_t size, const std::string& what) const {
    require(dim == Dim::fixed(size), VerifyError::OperandShape,
            what + " is " + to_string(dim) + ", expected " + std::to_string(size));
  }
  // Positions: the Positions entry input, one per token of `tokens`.
  void positions(size_t i, const Dim& tokens) const {
    const ValueType& type = operand(i);
    const Node& producer = graph_.node(graph_.values[node_.operands[i].index].producer);
    const auto* input = std::get_if<Input>(&producer.op);
    require(input && input->kind == EntryKind::Positions, VerifyError::PositionsNotEntry,
            "operand " + std::to_string(i) + " must be the Positions entry input");
    require(type.shape == Shape{tokens}, VerifyError::OperandShape, "positions must be one per token");
  }

  const WeightDescriptor& weight(TensorId id) const {
    require(id.index < graph_.weights.size(), VerifyError::UnknownReference, "weight has no descriptor");
    return graph_.weights[id.index];
  }
  // A matrix weight [rows, cols]; any encoding.
  const WeightDescriptor& matrix(TensorId id) const {
    const WeightDescriptor& w = weight(id);
    require(w.shape.size() == 2 && w.shape[0] > 0 && w.shape[1] > 0, VerifyError::OperandShape,
            "weight " + w.name + " must be a matrix");
    return w;
  }
  // A vector weight [length] (norm weight, bias, frequency factors): plain
  // floats, since block encodings are for matrix rows.
  void vector(TensorId id, int64_t length) const {
    const WeightDescriptor& w = weight(id);
    require(w.shape == std::vector<int64_t>{length}, VerifyError::OperandShape,
            "weight " + w.name + " must have shape [" + std::to_string(length) + "]");
    require(is_float(dtype_of_encoding(w.encoding)), VerifyError::OperandDType,
            "weight " + w.name + " must be plain float, has encoding " + encoding_info(w.encoding).name);
  }
  static ValueType with_last_dim(ValueType type, int64_t size) {
    type.shape.back() = Dim::fixed(size);
    return type;
  }

  std::optional<ValueType> rule(const Input&) const {
    operand_count(0);
    require(node_.result.has_value(), VerifyError::ResultTypeMismatch, "an entry input defines a value");
    const ValueType& type = graph_.value(*node_.result).type;
    require(type.dtype == DType::I32 && type.shape.size() == 1, VerifyError::ResultTypeMismatch,
            "an entry input is I32 [Tokens], not " + to_string(type));
    return type;
  }
  std::optional<ValueType> rule(const Output&) const {
    operand_count(1);
    activation(0);
    return std::nullopt;
  }
  std::optional<ValueType> rule(const Embedding& a) const {
    operand_count(1);
    const ValueType& ids = operand(0);
    require(ids.dtype == DType::I32, VerifyError::OperandDType, "token ids must be I32");
    require(ids.shape.size() == 1, VerifyError::OperandShape, "token ids must be [Tokens]");
    const WeightDescriptor& table = matrix(a.table);
    return ValueType{DType::F32, {ids.shape[0], Dim::fixed(table.shape[1])}};
  }
  std::optional<ValueType> rule(const MatMul& a) const {
    operand_count(1);
    const ValueType& x = activation(0);
    const WeightDescriptor& w = matrix(a.weight);
    dim_is(x.shape.back(), w.shape[1], "input last dim (weight " + w.name + " in-dim)");
    if (a.bias) vector(*a.bias, w.shape[0]);
    return with_last_dim(x, w.shape[0]);
  }
  std::optional<ValueType> elementwise_pair() const {
    operand_count(2);
    same_type(activation(0), activation(1), "operands differ");
    return operand(0);
  }
  std::optional<ValueType> rule(const Add&) const { return elementwise_pair(); }
  std::optional<ValueType> rule(const Mul&) const { return elementwise_pair(); }
  std::optional<ValueType> rule(const SwiGlu&) const { return elementwise_pair(); }
  std::optional<ValueType> unary() const {
    operand_count(1);
    return activation(0);
  }
  std::optional<ValueType> rule(const Silu&) const { return unary(); }
  std::optional<ValueType> rule(const Sigmoid&) const { return unary(); }
  std::optional<ValueType> rule(const Gelu&) const { return unary(); }
  std::optional<ValueType> rule(const Softmax&) const { return unary(); }
  std::optional<ValueType> rule(const RmsNorm& a) const {
    operand_count(1);
    const ValueType& x = activation(0);
    const Dim& width = x.shape.back();
    require(!width.is_symbolic(), VerifyError::OperandShape, "the normalised dim must be fixed");
    const WeightDescriptor& w = weight(a.weight);
    require(w.shape.size() == 1 && w.shape[0] > 0 && width.size % w.shape[0] == 0, VerifyError::OperandShape,
            "weight " + w.name + " length must divide the normalised width " + std::to_string(width.size));
    vector(a.weight, w.shape[0]);
    require_positive(a.eps, "eps");
    return x;
  }
  std::optional<ValueType> rule(const LayerNorm& a) const {
    operand_count(1);
    const ValueType& x = activation(0);
    const Dim& width = x.shape.back();
    require(!width.is_symbolic(), VerifyError::OperandShape, "the normalised dim must be fixed");
    vector(a.weight, width.size);
    if (a.bias) vector(*a.bias, width.size);
    require_positive(a.eps, "eps");
    return x;
  }
  std::optional<ValueType> rule(const Rope& a) const {
    operand_count(2);
    const ValueType& x = activation(0, 2);
    positions(1, x.shape[0]);
    require_positive(a.theta, "theta");
    require(a.head_dim > 0 && a.rotary_dim > 0 && a.rotary_dim <= a.head_dim && a.rotary_dim % 2 == 0,
            VerifyError::InvalidAttribute, "needs 0 < rotary_dim <= head_dim, rotary_dim even");
    const Dim& width = x.shape[1];
    require(!width.is_symbolic() && width.size % a.head_dim == 0, VerifyError::OperandShape,
            "width " + to_string(width) + " is not a multiple of head_dim " + std::to_string(a.head_dim));
    if (auto* linear = std::get_if<RopeLinearScaling>(&a.scaling)) require_positive(linear->factor, "linear factor");
    if (auto* llama3 = std::get_if<RopeLlama3Scaling>(&a.scaling)) vector(llama3->freq_factors, a.rotary_dim / 2);
    if (auto* yarn = std::get_if<RopeYarnScaling>(&a.scaling)) {
      require_positive(yarn->factor, "yarn factor");
      require(yarn->original_context > 0, VerifyError::InvalidAttribute, "yarn original_context must be > 0");
    }
    return x;
  }
  std::optional<ValueType> rule(const StateAppend& a) const {
    operand_count(2);
    const ValueType& x = activation(0, 2);
    positions(1, x.shape[0]);
    require(a.slot.index < graph_.slots.size(), VerifyError::UnknownReference, "state slot does not exist");
    const ValueType& state = graph_.slots[a.slot.index].type;
    require(state.shape.size() == 2 && state.shape[0].is_symbolic(), VerifyError::OperandShape,
            "state slot must be [Context, width]");
    require(x.shape[1] == state.shape[1], VerifyError::OperandShape,
            "appends width " + to_string(x.shape[1]) + " to a slot of width " + to_string(state.shape[1]));
    return state;
  }
  std::optional<ValueType> rule(const CausalAttention& a) const {
    operand_count(4);
    require(a.heads > 0 && a.kv_heads > 0 && a.head_dim > 0 && a.heads % a.kv_heads == 0,
            VerifyError::InvalidAttribute, "heads must be a positive multiple of kv_heads, head_dim > 0");
    require_positive(a.scale, "scale");
    const ValueType& q = activation(0, 2);
    const ValueType& k = activation(1, 2);
    same_type(k, activation(2, 2), "k and v differ");
    positions(3, q.shape[0]);
    dim_is(q.shape[1], int64_t{a.heads} * a.head_dim, "q width (heads * head_dim)");
    dim_is(k.shape[1], int64_t{a.kv_heads} * a.head_dim, "k width (kv_heads * head_dim)");
    return ValueType{DType::F32, q.shape};
  }
  std::optional<ValueType> rule(const TopKRoute& a) const {
    operand_count(1);
    const ValueType& scores = activation(0, 2);
    const Dim& experts = scores.shape[1];
    require(!experts.is_symbolic(), VerifyError::OperandShape, "the expert dim must be fixed");
    require(a.k >= 1 && a.k <= experts.size, VerifyError::InvalidAttribute,
            "k = " + std::to_string(a.k) + " for " + std::to_string(experts.size) + " experts");
    require(!a.capacity || *a.capacity > 0, VerifyError::InvalidAttribute, "capacity must be > 0");
    return ValueType{DType::F32, scores.shape};
  }
  std::optional<ValueType> rule(const Merge& a) const {
    const size_t first = a.mode == MergeMode::GatedSum ? 1 : 0;
    require(node_.operands.size() >= first + 1, VerifyError::OperandCount, "needs at least one merged value");
    const ValueType& merged = activation(first);
    for (size_t i = first + 1; i < node_.operands.size(); ++i)
      same_type(merged, activation(i), "merged values differ");
    if (a.mode == MergeMode::GatedSum) {
      const ValueType& gates = activation(0, 2);
      dim_is(gates.shape[1], static_cast<int64_t>(node_.operands.size() - 1), "gate columns (one per value)");
      require(gates.shape[0] == merged.shape[0], VerifyError::OperandShape, "gates and values differ in tokens");
    }
    return merged;
  }
  std::optional<ValueType> rule(const Logits& a) const {
    operand_count(1);
    const ValueType& x = activation(0, 2);
    const WeightDescriptor& w = matrix(a.weight);
    dim_is(x.shape[1], w.shape[1], "input width (weight " + w.name + " in-dim)");
    return ValueType{DType::F32, {x.shape[0], Dim::fixed(w.shape[0])}};
  }

  const Graph& graph_;
  NodeId id_;
  const Node& node_;
};

}  // namespace

std::optional<ValueType> infer_result(const Graph& graph, NodeId node) { return OpRules(graph, node).infer(); }

}  // namespace synapse::ir
