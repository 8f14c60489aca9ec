// GraphBuilder: how model builders write a graph. Op helpers type-check their
// operands at once (throwing VerifyFailure) and return the defined value;
// nodes added between begin_region and end_region become that region's
// members (entry inputs and outputs never do); finish() derives every
// region's boundary descriptor and returns the verified graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verify.h"

namespace synapse::ir {

class GraphBuilder {
 public:
  // tokens: the Tokens dim of the entry inputs, e.g. Tokens[1..chunk].
  explicit GraphBuilder(Dim tokens);

  // Gives a symbolic bound its value for this graph (Graph::bounds).
  void bind(const std::string& bound, int64_t value);
  ValueId add_input(EntryKind kind);
  void add_output(OutputKind kind, ValueId value);
  TensorId add_weight(WeightDescriptor descriptor);
  SlotId add_slot(std::string name, ValueType type);
  // Names a value and the node that defines it (messages and dumps).
  void set_name(ValueId value, const std::string& name);

  ValueId embedding(TensorId table, ValueId ids);
  ValueId matmul(ValueId x, TensorId weight, std::optional<TensorId> bias = std::nullopt);
  ValueId add(ValueId a, ValueId b);
  ValueId mul(ValueId a, ValueId b);
  ValueId rms_norm(ValueId x, TensorId weight, float eps);
  ValueId layer_norm(ValueId x, TensorId weight, std::optional<TensorId> bias, float eps);
  ValueId rope(ValueId x, ValueId positions, const Rope& attributes);
  ValueId state_append(SlotId slot, ValueId x, ValueId positions);
  ValueId attention(ValueId q, ValueId k, ValueId v, ValueId positions, const CausalAttention& attributes);
  ValueId silu(ValueId x);
  ValueId sigmoid(ValueId x);
  ValueId gelu(ValueId x, GeluApproximation approximation);
  ValueId swiglu(ValueId gate, ValueId up);
  ValueId softmax(ValueId x);
  ValueId top_k_route(ValueId scores, const TopKRoute& attributes);
  // GatedSum: values[0] are the gates; SelectActive: all are alternatives.
  ValueId merge(MergeMode mode, std::vector<ValueId> values);
  ValueId logits(ValueId x, TensorId weight);
  // Any op; returns the value it defines (invalid for Output).
  ValueId apply(Op op, std::vector<ValueId> operands);

  RegionId begin_region(RegionKind kind, RegionActivation activation = RegionActivation::always());
  void end_region();

  // Derives the boundaries and verifies; throws VerifyFailure.
  Graph finish(const VerifyOptions& options = {}) &&;
  // Derives the boundaries only: for tools and tests that inspect or alter
  // the graph before verifying it.
  Graph finish_unverified() &&;

 private:
  Graph graph_;
  Dim tokens_;
  std::optional<RegionId> open_region_;
};

}  // namespace synapse::ir
