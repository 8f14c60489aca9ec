// One rejecting test per RegionActivation rule of SPEC §5, and the legitimate
// cases each rule must let through.
#include <gtest/gtest.h>

#include "ir/tiny_graphs.h"

namespace synapse::ir {
namespace {

using testing::build_dense;
using testing::build_moe;
using testing::DenseConfig;
using testing::MoeConfig;
using testing::region_of_kind;
using testing::value_named;
using testing::verify_error;

RegionActivation& activation(Graph& graph, const RegionKind& kind) {
  return graph.regions[region_of_kind(graph, kind).index].activation;
}

// A trained skip policy deciding from `decision`, skipping as `skip`.
RegionActivation trained(ValueId decision, SkipSemantics skip) {
  return {PolicyDecision{decision}, Provenance::TrainedPolicy, skip};
}

TEST(IrVerifyActivation, AlwaysRegionMustBeNotSkippable) {
  Graph graph = build_dense();
  activation(graph, RegionKind::mlp(0)).skip = OutputsAbsent{};
  EXPECT_EQ(verify_error(graph), VerifyError::AlwaysRegionSkippable);
}

TEST(IrVerifyActivation, ProvenanceMustFitTheDecision) {
  Graph routed_heuristic = build_moe();
  activation(routed_heuristic, RegionKind::expert_of(0, 1)).provenance = Provenance::Heuristic;
  EXPECT_EQ(verify_error(routed_heuristic), VerifyError::ProvenanceMismatch);

  Graph always_routed = build_dense();
  activation(always_routed, RegionKind::mlp(0)).provenance = Provenance::ModelRouted;
  EXPECT_EQ(verify_error(always_routed), VerifyError::ProvenanceMismatch);
}

TEST(IrVerifyActivation, RoutedRegionNeedsADecisionValue) {
  Graph graph = build_moe();
  std::get<RouteSlot>(activation(graph, RegionKind::expert_of(0, 0)).decision).router = ValueId{999};
  EXPECT_EQ(verify_error(graph), VerifyError::DecisionValueMissing);
}

TEST(IrVerifyActivation, TrainedPolicyNeedsADecisionValue) {
  Graph graph = build_dense();
  activation(graph, RegionKind::mlp(0)) =
      trained(ValueId{}, Bypass{value_named(graph, "h1"), value_named(graph, "h2")});
  EXPECT_EQ(verify_error(graph), VerifyError::DecisionValueMissing);
}

TEST(IrVerifyActivation, DecisionDefinedInsideTheRegion) {
  Graph graph = build_moe();
  std::get<RouteSlot>(activation(graph, RegionKind::expert_of(0, 0)).decision).router = value_named(graph, "e0_act");
  EXPECT_EQ(verify_error(graph), VerifyError::DecisionNotBeforeRegion);
}

TEST(IrVerifyActivation, DecisionDefinedAfterTheRegion) {
  Graph graph = build_dense();
  activation(graph, RegionKind::mlp(0)) =
      trained(value_named(graph, "logits"), Bypass{value_named(graph, "h1"), value_named(graph, "h2")});
  EXPECT_EQ(verify_error(graph), VerifyError::DecisionNotBeforeRegion);
}

TEST(IrVerifyActivation, RouteSlotNeedsATopKRouteAndAnExistingSlot) {
  Graph not_a_route = build_moe();
  std::get<RouteSlot>(activation(not_a_route, RegionKind::expert_of(0, 0)).decision).router =
      value_named(not_a_route, "probs");
  EXPECT_EQ(verify_error(not_a_route), VerifyError::RouteSlotInvalid);

  Graph no_such_slot = build_moe();
  std::get<RouteSlot>(activation(no_such_slot, RegionKind::expert_of(0, 1)).decision).slot = 2;
  EXPECT_EQ(verify_error(no_such_slot), VerifyError::RouteSlotInvalid);
}

TEST(IrVerifyActivation, NonCausalRouteIsRejectedForDecode) {
  MoeConfig batch_scope;
  batch_scope.route.scope = RouteScope::Batch;
  EXPECT_EQ(verify_error(build_moe(batch_scope)), VerifyError::NonCausalRouteInDecode);
  EXPECT_EQ(verify_error(build_moe(batch_scope), {.for_decode = false}), std::nullopt);

  MoeConfig capacity;
  capacity.route.capacity = 4;
  EXPECT_EQ(verify_error(build_moe(capacity)), VerifyError::NonCausalRouteInDecode);
}

TEST(IrVerifyActivation, AbsentOutputNeedsATolerantConsumer) {
  Graph graph = build_dense();
  // The MLP's output h2 feeds the final norm, which cannot do without it.
  activation(graph, RegionKind::mlp(0)) = trained(value_named(graph, "h1"), OutputsAbsent{});
  EXPECT_EQ(verify_error(graph), VerifyError::AbsentOutputWithoutTolerantConsumer);

  Graph moe = build_moe();  // expert outputs feed Merge(GatedSum): accepted
  EXPECT_EQ(verify_error(moe), std::nullopt);
  // An expert whose output also feeds a plain Add is rejected.
  testing::node(moe, "h1").operands[1] = value_named(moe, "e1_out");
  derive_boundaries(moe);  // the descriptors follow the rewiring
  EXPECT_EQ(verify_error(moe), VerifyError::AbsentOutputWithoutTolerantConsumer);
}

TEST(IrVerifyActivation, BypassRunsFromRegionInputToRegionOutput) {
  Graph legit = build_dense();
  activation(legit, RegionKind::mlp(0)) =
      trained(value_named(legit, "h1"), Bypass{value_named(legit, "h1"), value_named(legit, "h2")});
  EXPECT_EQ(verify_error(legit), std::nullopt);

  Graph graph = build_dense();
  activation(graph, RegionKind::mlp(0)) =
      trained(value_named(graph, "h1"), Bypass{value_named(graph, "h0"), value_named(graph, "h2")});
  EXPECT_EQ(verify_error(graph), VerifyError::BypassNotOnBoundary);
}

TEST(IrVerifyActivation, BypassShapesMustMatch) {
  Graph graph = build_dense();
  // Logits region: h2 [T, 8] in, logits [T, 10] out.
  activation(graph, RegionKind::logits()) =
      trained(value_named(graph, "h1"), Bypass{value_named(graph, "h2"), value_named(graph, "logits")});
  EXPECT_EQ(verify_error(graph), VerifyError::BypassShapeMismatch);
}

TEST(IrVerifyActivation, SkippableStateWriterNeedsHoleAwareReaders) {
  auto skip_attention = [](Graph graph) {
    activation(graph, RegionKind::attention(0)) =
        trained(value_named(graph, "h0"), Bypass{value_named(graph, "h0"), value_named(graph, "h1")});
    return graph;
  };
  EXPECT_EQ(verify_error(skip_attention(build_dense())), VerifyError::StateHolesNotAccepted);
  EXPECT_EQ(verify_error(skip_attention(build_dense(DenseConfig{.attention_accepts_holes = true}))), std::nullopt);
}

}  // namespace
}  // namespace synapse::ir
