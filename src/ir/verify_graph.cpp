// Verifier phases 1 and 2: references, SSA, order and symbols; then the type
// rules of every operation (via infer_result).
#include <queue>

#include "ir/verify_phases.h"

namespace synapse::ir {
namespace {

void check_references(const Graph& graph) {
  auto in_range = [](auto id, size_t size) { return id.index < size; };
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (ValueId operand : node.operands)
      if (!in_range(operand, graph.values.size()))
        fail(VerifyError::UnknownReference, "operand names no value", NodeId{n});
    if (node.result && !in_range(*node.result, graph.values.size()))
      fail(VerifyError::UnknownReference, "result names no value", NodeId{n});
    for (TensorId weight : weights_of(node.op))
      if (!in_range(weight, graph.weights.size()))
        fail(VerifyError::UnknownReference, "weight " + std::to_string(weight.index) + " has no descriptor",
             NodeId{n});
    if (auto* append = std::get_if<StateAppend>(&node.op); append && !in_range(append->slot, graph.slots.size()))
      fail(VerifyError::UnknownReference, "state slot " + std::to_string(append->slot.index) + " does not exist",
           NodeId{n});
  }
}

// The node that defines each value; throws on a second definition or a value
// that no node (or another node than its producer) defines.
std::vector<NodeId> check_definitions(const Graph& graph) {
  std::vector<NodeId> defined_by(graph.values.size());
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const auto& result = graph.nodes[n].result;
    if (!result) continue;
    if (defined_by[result->index].valid())
      fail(VerifyError::ValueDefinedTwice,
           "value " + std::to_string(result->index) + " already defined by node " +
               std::to_string(defined_by[result->index].index),
           NodeId{n});
    defined_by[result->index] = NodeId{n};
  }
  for (uint32_t v = 0; v < graph.values.size(); ++v) {
    if (!defined_by[v].valid())
      fail(VerifyError::UndefinedValue, "value " + std::to_string(v) + " is defined by no node");
    if (defined_by[v] != graph.values[v].producer)
      fail(VerifyError::ValueDefinedTwice,
           "value " + std::to_string(v) + " names producer " + std::to_string(graph.values[v].producer.index) +
               " but is defined by node " + std::to_string(defined_by[v].index),
           defined_by[v]);
  }
  return defined_by;
}

// Called once a use before definition is found: tells a reorderable graph
// (NotTopological) from one whose uses form a cycle (Kahn's algorithm).
[[noreturn]] void fail_order(const Graph& graph, const std::vector<NodeId>& defined_by, NodeId first_bad) {
  const size_t count = graph.nodes.size();
  std::vector<std::vector<uint32_t>> users(count);
  std::vector<uint32_t> pending(count, 0);
  for (uint32_t n = 0; n < count; ++n)
    for (ValueId operand : graph.nodes[n].operands) {
      users[defined_by[operand.index].index].push_back(n);
      ++pending[n];
    }
  std::queue<uint32_t> ready;
  for (uint32_t n = 0; n < count; ++n)
    if (pending[n] == 0) ready.push(n);
  size_t ordered = 0;
  for (; !ready.empty(); ready.pop(), ++ordered)
    for (uint32_t user : users[ready.front()])
      if (--pending[user] == 0) ready.push(user);
  if (ordered < count) {
    uint32_t on_cycle = 0;
    while (pending[on_cycle] == 0) ++on_cycle;
    fail(VerifyError::Cycle, "the graph's uses form a cycle", NodeId{on_cycle});
  }
  fail(VerifyError::NotTopological, "an operand is used before the node that defines it", first_bad);
}

void check_order(const Graph& graph, const std::vector<NodeId>& defined_by) {
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    for (ValueId operand : graph.nodes[n].operands)
      if (defined_by[operand.index].index >= n) fail_order(graph, defined_by, NodeId{n});
}

void check_shape_dims(const Graph& graph, const Shape& shape, const std::string& owner) {
  for (const Dim& dim : shape) {
    if (!dim.is_symbolic()) {
      if (dim.size < 1) fail(VerifyError::OperandShape, owner + " has a dimension below 1: " + to_string(shape));
      continue;
    }
    auto bound = graph.bounds.find(dim.bound);
    if (bound == graph.bounds.end())
      fail(VerifyError::UnboundSymbol, owner + ": bound '" + dim.bound + "' of " + to_string(dim) + " has no value");
    if (dim.lower < 1 || bound->second < dim.lower)
      fail(VerifyError::UnboundSymbol, owner + ": " + to_string(dim) + " with " + dim.bound + " = " +
                                           std::to_string(bound->second) + " is empty");
  }
}

void check_symbols(const Graph& graph) {
  for (uint32_t v = 0; v < graph.values.size(); ++v)
    check_shape_dims(graph, graph.values[v].type.shape, "value " + std::to_string(v));
  for (const StateSlot& slot : graph.slots) check_shape_dims(graph, slot.type.shape, "slot " + slot.name);
}

}  // namespace

void verify_references_and_order(const Graph& graph) {
  check_references(graph);
  const std::vector<NodeId> defined_by = check_definitions(graph);
  check_order(graph, defined_by);
  check_symbols(graph);
}

void verify_operations(const Graph& graph) {
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const std::optional<ValueType> expected = infer_result(graph, NodeId{n});
    if (expected.has_value() != node.result.has_value())
      fail(VerifyError::ResultTypeMismatch,
           std::string(op_name(node.op)) + (expected ? " must define a value" : " defines no value"), NodeId{n});
    if (expected && graph.values[node.result->index].type != *expected)
      fail(VerifyError::ResultTypeMismatch,
           std::string(op_name(node.op)) + " produces " + to_string(*expected) + ", the value says " +
               to_string(graph.values[node.result->index].type),
           NodeId{n});
  }
}

}  // namespace synapse::ir
