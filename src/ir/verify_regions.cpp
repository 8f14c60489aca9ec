// Verifier phase 3: every non-entry node in exactly one region, and each
// region's boundary descriptor equal to the boundary derived from its members.
#include <algorithm>
#include <set>

#include "ir/verify_phases.h"

namespace synapse::ir {
namespace {

template <class IdT>
std::vector<IdT> sorted_ids(const std::set<IdT>& ids) {
  return {ids.begin(), ids.end()};
}

template <class IdT>
std::string list(const std::vector<IdT>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(ids[i].index);
  }
  return out + "}";
}

// Region of each node; throws on an unknown member, an entry member, a node in
// two regions or in none.
void check_coverage(const Graph& graph) {
  std::vector<RegionId> region_of(graph.nodes.size());
  for (uint32_t r = 0; r < graph.regions.size(); ++r) {
    for (NodeId member : graph.regions[r].members) {
      if (member.index >= graph.nodes.size())
        fail(VerifyError::UnknownReference, "member names no node", std::nullopt, RegionId{r});
      if (is_entry(graph.nodes[member.index].op))
        fail(VerifyError::EntryNodeInRegion, "entry inputs and outputs are not region members", member,
             RegionId{r});
      if (region_of[member.index].valid())
        fail(VerifyError::NodeInSeveralRegions,
             "node is also in region " + std::to_string(region_of[member.index].index), member, RegionId{r});
      region_of[member.index] = RegionId{r};
    }
  }
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    if (!is_entry(graph.nodes[n].op) && !region_of[n].valid())
      fail(VerifyError::NodeInNoRegion, std::string(op_name(graph.nodes[n].op)) + " belongs to no region", NodeId{n});
}

void compare_field(const char* field, const auto& declared, const auto& derived, RegionId region) {
  if (declared != derived)
    fail(VerifyError::BoundaryMismatch,
         std::string(field) + ": descriptor says " + list(declared) + ", members give " + list(derived), std::nullopt,
         region);
}

}  // namespace

RegionBoundary derive_boundary(const Graph& graph, const Region& region, const ConsumerIndex& consumers) {
  const std::set<NodeId> members(region.members.begin(), region.members.end());
  std::set<ValueId> inputs, outputs;
  std::set<SlotId> slots;
  std::set<TensorId> weights;
  for (NodeId id : region.members) {
    const Node& node = graph.node(id);
    for (ValueId operand : node.operands)
      if (!members.contains(graph.value(operand).producer)) inputs.insert(operand);
    if (node.result) {
      const auto& users = consumers[node.result->index];
      if (std::any_of(users.begin(), users.end(), [&](NodeId user) { return !members.contains(user); }))
        outputs.insert(*node.result);
    }
    // StateAppend both reads the slot (it returns the contents so far) and writes it.
    if (auto* append = std::get_if<StateAppend>(&node.op)) slots.insert(append->slot);
    for (TensorId weight : weights_of(node.op)) weights.insert(weight);
  }
  return RegionBoundary{sorted_ids(inputs), sorted_ids(outputs), sorted_ids(slots), sorted_ids(slots),
                        sorted_ids(weights)};
}

void derive_boundaries(Graph& graph) {
  const ConsumerIndex consumers = index_consumers(graph);
  for (Region& region : graph.regions) region.boundary = derive_boundary(graph, region, consumers);
}

void verify_regions(const Graph& graph, const ConsumerIndex& consumers) {
  check_coverage(graph);
  for (uint32_t r = 0; r < graph.regions.size(); ++r) {
    const RegionBoundary& declared = graph.regions[r].boundary;
    const RegionBoundary derived = derive_boundary(graph, graph.regions[r], consumers);
    compare_field("inputs", declared.inputs, derived.inputs, RegionId{r});
    compare_field("outputs", declared.outputs, derived.outputs, RegionId{r});
    compare_field("state reads", declared.state_reads, derived.state_reads, RegionId{r});
    compare_field("state writes", declared.state_writes, derived.state_writes, RegionId{r});
    compare_field("weights", declared.weights, derived.weights, RegionId{r});
  }
}

}  // namespace synapse::ir
