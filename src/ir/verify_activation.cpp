// Verifier phase 4: the RegionActivation rules of SPEC §5.
#include <algorithm>

#include "ir/overloaded.h"
#include "ir/verify_phases.h"

namespace synapse::ir {
namespace {

template <class T>
bool contains(const std::vector<T>& items, const T& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// A consumer that still works when an operand is absent for a step.
bool tolerates_absence(const Op& op) {
  const auto* merge = std::get_if<Merge>(&op);
  return merge && (merge->mode == MergeMode::GatedSum || merge->mode == MergeMode::SelectActive);
}

bool provenance_fits(const Decision& decision, Provenance provenance) {
  return std::visit(Overloaded{
                        [&](const AlwaysActive&) { return provenance == Provenance::Structural; },
                        [&](const RouteSlot&) { return provenance == Provenance::ModelRouted; },
                        [&](const PolicyDecision&) {
                          return provenance == Provenance::TrainedPolicy || provenance == Provenance::Heuristic;
                        },
                    },
                    decision);
}

class ActivationRules {
 public:
  ActivationRules(const Graph& graph, const ConsumerIndex& consumers, const VerifyOptions& options, RegionId id)
      : graph_(graph), consumers_(consumers), options_(options), id_(id), region_(graph.region(id)) {}

  void check() const {
    const RegionActivation& activation = region_.activation;
    const bool always = std::holds_alternative<AlwaysActive>(activation.decision);
    require(!always || !is_skippable(activation), VerifyError::AlwaysRegionSkippable,
            "an Always region must be NotSkippable");
    require(provenance_fits(activation.decision, activation.provenance), VerifyError::ProvenanceMismatch,
            std::string("provenance ") + to_string(activation.provenance) + " does not fit the decision");
    if (auto* route = std::get_if<RouteSlot>(&activation.decision)) check_route(*route);
    if (auto* policy = std::get_if<PolicyDecision>(&activation.decision)) check_decision_value(policy->value);
    if (!is_skippable(activation)) return;
    std::optional<ValueId> bypassed;
    if (auto* bypass = std::get_if<Bypass>(&activation.skip)) {
      check_bypass(*bypass);
      bypassed = bypass->output;
    }
    for (ValueId output : region_.boundary.outputs)
      if (output != bypassed) check_absent_output(output);
    for (SlotId slot : region_.boundary.state_writes) check_hole_readers(slot);
  }

 private:
  void require(bool ok, VerifyError error, const std::string& message) const {
    if (!ok) fail(error, to_string(region_.kind) + ": " + message, std::nullopt, id_);
  }

  // Defined outside the region, by a node before the region's first member,
  // so the decision is known when the scheduler reaches the region.
  const Node& check_decision_value(ValueId value) const {
    require(value.index < graph_.values.size(), VerifyError::DecisionValueMissing, "the decision names no value");
    const NodeId producer = graph_.values[value.index].producer;
    const auto first = std::min_element(region_.members.begin(), region_.members.end());
    require(first == region_.members.end() || producer < *first, VerifyError::DecisionNotBeforeRegion,
            "the decision value " + std::to_string(value.index) + " is defined by node " +
                std::to_string(producer.index) + ", not before the region");
    return graph_.node(producer);
  }

  void check_route(const RouteSlot& route) const {
    const Node& producer = check_decision_value(route.router);
    const auto* top_k = std::get_if<TopKRoute>(&producer.op);
    require(top_k != nullptr, VerifyError::RouteSlotInvalid, "the router value is not a TopKRoute result");
    const Dim& experts = graph_.values[route.router.index].type.shape.back();
    require(route.slot < experts.size, VerifyError::RouteSlotInvalid,
            "slot " + std::to_string(route.slot) + " of " + std::to_string(experts.size) + " experts");
    require(!options_.for_decode || is_causal(*top_k), VerifyError::NonCausalRouteInDecode,
            "the route looks at later tokens (batch scope or capacity) and the graph serves decode");
  }

  void check_bypass(const Bypass& bypass) const {
    require(contains(region_.boundary.inputs, bypass.input) && contains(region_.boundary.outputs, bypass.output),
            VerifyError::BypassNotOnBoundary, "a bypass runs from a region input to a region output");
    const ValueType& from = graph_.value(bypass.input).type;
    const ValueType& to = graph_.value(bypass.output).type;
    require(from == to, VerifyError::BypassShapeMismatch,
            "bypass from " + to_string(from) + " to " + to_string(to));
  }

  void check_absent_output(ValueId output) const {
    for (NodeId user : consumers_[output.index]) {
      if (contains(region_.members, user)) continue;
      require(tolerates_absence(graph_.node(user).op), VerifyError::AbsentOutputWithoutTolerantConsumer,
              "output " + std::to_string(output.index) + " may be absent but node " + std::to_string(user.index) +
                  " (" + op_name(graph_.node(user).op) + ") needs it");
    }
  }

  // Skipping the writer leaves holes in the slot: every reader of the slot's
  // contents must mask them.
  void check_hole_readers(SlotId slot) const {
    for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
      const auto* append = std::get_if<StateAppend>(&graph_.nodes[n].op);
      if (!append || append->slot != slot) continue;
      for (NodeId reader : consumers_[graph_.nodes[n].result->index]) {
        const auto* attention = std::get_if<CausalAttention>(&graph_.node(reader).op);
        require(attention && attention->accepts_position_holes, VerifyError::StateHolesNotAccepted,
                "skipping it leaves holes in slot " + graph_.slot(slot).name + " that node " +
                    std::to_string(reader.index) + " does not accept");
      }
    }
  }

  const Graph& graph_;
  const ConsumerIndex& consumers_;
  const VerifyOptions& options_;
  RegionId id_;
  const Region& region_;
};

}  // namespace

void verify_activations(const Graph& graph, const ConsumerIndex& consumers, const VerifyOptions& options) {
  for (uint32_t r = 0; r < graph.regions.size(); ++r) ActivationRules(graph, consumers, options, RegionId{r}).check();
}

}  // namespace synapse::ir
