#include "ir/graph.h"

#include "synapse/error.h"

namespace synapse::ir {
namespace {

template <class T, class IdT>
const T& checked_at(const std::vector<T>& table, IdT id, const char* what) {
  if (id.index >= table.size())
    throw Error(ErrorKind::InvalidValue, std::string("no ") + what + " with id " + std::to_string(id.index));
  return table[id.index];
}

std::vector<NodeId> nodes_with(const Graph& graph, bool (*predicate)(const Op&)) {
  std::vector<NodeId> out;
  for (uint32_t i = 0; i < graph.nodes.size(); ++i)
    if (predicate(graph.nodes[i].op)) out.push_back(NodeId{i});
  return out;
}

}  // namespace

const Value& Graph::value(ValueId id) const { return checked_at(values, id, "value"); }
const Node& Graph::node(NodeId id) const { return checked_at(nodes, id, "node"); }
const WeightDescriptor& Graph::weight(TensorId id) const { return checked_at(weights, id, "weight"); }
const StateSlot& Graph::slot(SlotId id) const { return checked_at(slots, id, "state slot"); }
const Region& Graph::region(RegionId id) const { return checked_at(regions, id, "region"); }

std::vector<NodeId> Graph::entry_inputs() const {
  return nodes_with(*this, [](const Op& op) { return std::holds_alternative<Input>(op); });
}

std::vector<NodeId> Graph::entry_outputs() const {
  return nodes_with(*this, [](const Op& op) { return std::holds_alternative<Output>(op); });
}

ConsumerIndex index_consumers(const Graph& graph) {
  ConsumerIndex consumers(graph.values.size());
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId operand : graph.nodes[n].operands) {
      if (operand.index >= consumers.size()) continue;
      auto& users = consumers[operand.index];
      if (users.empty() || users.back() != NodeId{n}) users.push_back(NodeId{n});
    }
  }
  return consumers;
}

void check_weight_bounds(const Graph& graph, std::span<const uint64_t> file_sizes) {
  for (const WeightDescriptor& w : graph.weights) {
    if (w.file >= file_sizes.size())
      throw Error(ErrorKind::OutOfBounds, "weight refers to source file " + std::to_string(w.file) + " of " +
                                              std::to_string(file_sizes.size()),
                  Error::kNoOffset, w.name);
    if (w.length == 0) throw Error(ErrorKind::InvalidValue, "weight has an empty byte range", w.offset, w.name);
    if (w.offset > UINT64_MAX - w.length)
      throw Error(ErrorKind::Overflow, "weight offset + length overflows", w.offset, w.name);
    if (w.offset + w.length > file_sizes[w.file])
      throw Error(ErrorKind::OutOfBounds,
                  "weight bytes [" + std::to_string(w.offset) + ", " + std::to_string(w.offset + w.length) +
                      ") pass the end of file " + std::to_string(w.file) + " (" +
                      std::to_string(file_sizes[w.file]) + " bytes)",
                  w.offset, w.name);
  }
}

}  // namespace synapse::ir
