// The graph verifier: SSA and order, per-op type rules, region coverage and
// boundaries, and the activation rules of SPEC §5. verify() throws
// VerifyFailure naming the first rule broken and the node or region concerned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "synapse/error.h"

namespace synapse::ir {

// One value per rule.
enum class VerifyError : uint8_t {
  // References and SSA (verify_graph.cpp)
  UnknownReference,    // a value, node, weight or slot id out of range
  ValueDefinedTwice,   // two nodes define a value, or a value's producer disagrees
  UndefinedValue,      // a value no node defines
  NotTopological,      // a value used before its definition (the graph is acyclic)
  Cycle,               // the uses form a cycle
  UnboundSymbol,       // a symbolic dim's bound has no value in Graph::bounds
  // Operation rules (infer_types.cpp)
  OperandCount,        // wrong number of operands
  OperandDType,        // an operand or weight of the wrong dtype
  OperandShape,        // an operand or weight of the wrong shape
  InvalidAttribute,    // an attribute out of its domain (eps <= 0, k > experts, ...)
  ResultTypeMismatch,  // the defined value's type is not what the op produces
  PositionsNotEntry,   // Rope/StateAppend/CausalAttention positions not the entry input
  // Regions (verify_regions.cpp)
  NodeInNoRegion,
  NodeInSeveralRegions,
  EntryNodeInRegion,   // Input or Output node listed as a member
  BoundaryMismatch,    // the descriptor differs from the boundary derived from members
  // Activation (verify_activation.cpp)
  ProvenanceMismatch,  // Always<->Structural, RouteSlot<->ModelRouted, Policy<->Trained|Heuristic
  DecisionValueMissing,
  DecisionNotBeforeRegion,  // decision defined inside the region or after it starts
  RouteSlotInvalid,         // router value not a TopKRoute result, or slot >= experts
  NonCausalRouteInDecode,
  AbsentOutputWithoutTolerantConsumer,
  BypassNotOnBoundary,
  BypassShapeMismatch,
  StateHolesNotAccepted,    // a skippable region writes state read by hole-unaware readers
  AlwaysRegionSkippable,
};

const char* to_string(VerifyError error);

struct VerifyIssue {
  VerifyError error;
  std::string message;
  std::optional<NodeId> node;
  std::optional<RegionId> region;
};

class VerifyFailure : public Error {
 public:
  explicit VerifyFailure(VerifyIssue issue);
  const VerifyIssue& issue() const { return issue_; }
  VerifyError error() const { return issue_.error; }

 private:
  VerifyIssue issue_;
};

struct VerifyOptions {
  // The graph will run decode steps, so every route must be causal.
  bool for_decode = true;
};

void verify(const Graph& graph, const VerifyOptions& options = {});

// The type an operation's result has, checked against its operands, weights,
// slots and attributes; nullopt for Output. Throws VerifyFailure naming `node`.
// The builder uses it to type new values, the verifier to check them.
std::optional<ValueType> infer_result(const Graph& graph, NodeId node);

// A region's boundary as its members define it.
RegionBoundary derive_boundary(const Graph& graph, const Region& region, const ConsumerIndex& consumers);
// Sets every region's boundary descriptor to the derived one.
void derive_boundaries(Graph& graph);

}  // namespace synapse::ir
