#include "ir/verify_phases.h"

namespace synapse::ir {
namespace {

std::string describe(const VerifyIssue& issue) {
  std::string s = std::string(to_string(issue.error)) + ": " + issue.message;
  if (issue.node) s += " (node " + std::to_string(issue.node->index) + ")";
  if (issue.region) s += " (region " + std::to_string(issue.region->index) + ")";
  return s;
}

}  // namespace

const char* to_string(VerifyError error) {
  switch (error) {
    case VerifyError::UnknownReference: return "UnknownReference";
    case VerifyError::ValueDefinedTwice: return "ValueDefinedTwice";
    case VerifyError::UndefinedValue: return "UndefinedValue";
    case VerifyError::NotTopological: return "NotTopological";
    case VerifyError::Cycle: return "Cycle";
    case VerifyError::UnboundSymbol: return "UnboundSymbol";
    case VerifyError::OperandCount: return "OperandCount";
    case VerifyError::OperandDType: return "OperandDType";
    case VerifyError::OperandShape: return "OperandShape";
    case VerifyError::InvalidAttribute: return "InvalidAttribute";
    case VerifyError::ResultTypeMismatch: return "ResultTypeMismatch";
    case VerifyError::PositionsNotEntry: return "PositionsNotEntry";
    case VerifyError::NodeInNoRegion: return "NodeInNoRegion";
    case VerifyError::NodeInSeveralRegions: return "NodeInSeveralRegions";
    case VerifyError::EntryNodeInRegion: return "EntryNodeInRegion";
    case VerifyError::BoundaryMismatch: return "BoundaryMismatch";
    case VerifyError::ProvenanceMismatch: return "ProvenanceMismatch";
    case VerifyError::DecisionValueMissing: return "DecisionValueMissing";
    case VerifyError::DecisionNotBeforeRegion: return "DecisionNotBeforeRegion";
    case VerifyError::RouteSlotInvalid: return "RouteSlotInvalid";
    case VerifyError::NonCausalRouteInDecode: return "NonCausalRouteInDecode";
    case VerifyError::AbsentOutputWithoutTolerantConsumer: return "AbsentOutputWithoutTolerantConsumer";
    case VerifyError::BypassNotOnBoundary: return "BypassNotOnBoundary";
    case VerifyError::BypassShapeMismatch: return "BypassShapeMismatch";
    case VerifyError::StateHolesNotAccepted: return "StateHolesNotAccepted";
    case VerifyError::AlwaysRegionSkippable: return "AlwaysRegionSkippable";
  }
  return "?";
}

VerifyFailure::VerifyFailure(VerifyIssue issue)
    : Error(ErrorKind::InvalidValue, describe(issue)), issue_(std::move(issue)) {}

void fail(VerifyError error, std::string message, std::optional<NodeId> node, std::optional<RegionId> region) {
  throw VerifyFailure(VerifyIssue{error, std::move(message), node, region});
}

void verify(const Graph& graph, const VerifyOptions& options) {
  verify_references_and_order(graph);
  verify_operations(graph);
  const ConsumerIndex consumers = index_consumers(graph);
  verify_regions(graph, consumers);
  verify_activations(graph, consumers, options);
}

}  // namespace synapse::ir
