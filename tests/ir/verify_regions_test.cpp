// One rejecting test per region coverage and boundary rule.
#include <gtest/gtest.h>

#include "ir/tiny_graphs.h"

namespace synapse::ir {
namespace {

using testing::build_dense;
using testing::node_named;
using testing::region_of_kind;
using testing::value_named;
using testing::verify_error;

Region& region(Graph& graph, const RegionKind& kind) { return graph.regions[region_of_kind(graph, kind).index]; }

TEST(IrVerifyRegions, NodeOutsideEveryRegion) {
  Graph graph = build_dense();
  std::erase(region(graph, RegionKind::mlp(0)).members, node_named(graph, "swiglu"));
  EXPECT_EQ(verify_error(graph), VerifyError::NodeInNoRegion);
}

TEST(IrVerifyRegions, NodeInTwoRegions) {
  Graph graph = build_dense();
  region(graph, RegionKind::mlp(0)).members.push_back(node_named(graph, "h1"));
  EXPECT_EQ(verify_error(graph), VerifyError::NodeInSeveralRegions);
}

TEST(IrVerifyRegions, EntryInputIsNoMember) {
  Graph graph = build_dense();
  region(graph, RegionKind::attention(0)).members.push_back(node_named(graph, "pos"));
  EXPECT_EQ(verify_error(graph), VerifyError::EntryNodeInRegion);
}

TEST(IrVerifyRegions, EntryOutputIsNoMember) {
  Graph graph = build_dense();
  region(graph, RegionKind::logits()).members.push_back(graph.entry_outputs().front());
  EXPECT_EQ(verify_error(graph), VerifyError::EntryNodeInRegion);
}

TEST(IrVerifyRegions, LyingOutputsAreABoundaryMismatch) {
  Graph graph = build_dense();
  region(graph, RegionKind::attention(0)).boundary.outputs.push_back(value_named(graph, "q"));
  EXPECT_EQ(verify_error(graph), VerifyError::BoundaryMismatch);
}

TEST(IrVerifyRegions, MissingInputIsABoundaryMismatch) {
  Graph graph = build_dense();
  std::erase(region(graph, RegionKind::attention(0)).boundary.inputs, value_named(graph, "pos"));
  EXPECT_EQ(verify_error(graph), VerifyError::BoundaryMismatch);
}

TEST(IrVerifyRegions, UndeclaredStateWriteIsABoundaryMismatch) {
  Graph graph = build_dense();
  region(graph, RegionKind::attention(0)).boundary.state_writes.clear();
  EXPECT_EQ(verify_error(graph), VerifyError::BoundaryMismatch);
}

TEST(IrVerifyRegions, UndeclaredWeightIsABoundaryMismatch) {
  Graph graph = build_dense();
  region(graph, RegionKind::mlp(0)).boundary.weights.pop_back();
  EXPECT_EQ(verify_error(graph), VerifyError::BoundaryMismatch);
}

}  // namespace
}  // namespace synapse::ir
