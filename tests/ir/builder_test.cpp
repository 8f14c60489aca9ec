#include "ir/builder.h"

#include <gtest/gtest.h>

#include "ir/tiny_graphs.h"
#include "synapse/error.h"

namespace synapse::ir {
namespace {

using testing::build_dense;
using testing::build_moe;
using testing::region_of_kind;
using testing::value_named;
using testing::verify_error;

TEST(IrBuilder, TinyDenseGraphVerifies) {
  const Graph graph = build_dense();
  EXPECT_EQ(verify_error(graph), std::nullopt);
  ASSERT_EQ(graph.regions.size(), 4u);
  EXPECT_EQ(graph.entry_inputs().size(), 2u);
  EXPECT_EQ(graph.entry_outputs().size(), 1u);

  // The attention region's boundary as the builder derived it.
  const Region& attention = graph.region(region_of_kind(graph, RegionKind::attention(0)));
  EXPECT_EQ(attention.boundary.inputs, (std::vector{value_named(graph, "pos"), value_named(graph, "h0")}));
  EXPECT_EQ(attention.boundary.outputs, std::vector{value_named(graph, "h1")});
  EXPECT_EQ(attention.boundary.state_writes, (std::vector{SlotId{0}, SlotId{1}}));
  EXPECT_EQ(attention.boundary.weights.size(), 5u);
}

TEST(IrBuilder, TinyMoeGraphVerifies) { EXPECT_EQ(verify_error(build_moe()), std::nullopt); }

TEST(IrBuilder, FinishVerifies) {
  GraphBuilder b(Dim::symbolic("Tokens", 1, "chunk"));
  b.bind("chunk", 8);
  const ValueId ids = b.add_input(EntryKind::TokenIds);
  const TensorId table = b.add_weight({"token_embd", 0, 0, 320, Encoding::F32, {10, 8}});
  b.begin_region(RegionKind::embedding());
  const ValueId h = b.embedding(table, ids);
  b.end_region();
  b.add_output(OutputKind::Hidden, h);
  const Graph graph = std::move(b).finish();
  EXPECT_EQ(graph.value(h).type, (ValueType{DType::F32, {Dim::symbolic("Tokens", 1, "chunk"), Dim::fixed(8)}}));

  GraphBuilder unbound(Dim::symbolic("Tokens", 1, "chunk"));
  unbound.add_input(EntryKind::TokenIds);
  try {
    std::move(unbound).finish();
    FAIL() << "an unbound chunk size must not verify";
  } catch (const VerifyFailure& failure) {
    EXPECT_EQ(failure.error(), VerifyError::UnboundSymbol);
  }
}

TEST(IrBuilder, IllTypedOpIsRejectedAtOnceAndLeavesTheBuilderUsable) {
  GraphBuilder b(Dim::fixed(1));
  const ValueId ids = b.add_input(EntryKind::TokenIds);
  const TensorId table = b.add_weight({"token_embd", 0, 0, 320, Encoding::F32, {10, 8}});
  const TensorId wrong = b.add_weight({"w", 0, 320, 144, Encoding::F32, {4, 9}});
  b.begin_region(RegionKind::embedding());
  const ValueId h = b.embedding(table, ids);
  try {
    b.matmul(h, wrong);
    FAIL() << "MatMul of width 8 by a weight with in-dim 9 must be rejected";
  } catch (const VerifyFailure& failure) {
    EXPECT_EQ(failure.error(), VerifyError::OperandShape);
    EXPECT_EQ(failure.issue().node, NodeId{2});
  }
  b.end_region();
  b.add_output(OutputKind::Hidden, h);
  const Graph graph = std::move(b).finish();
  EXPECT_EQ(graph.nodes.size(), 3u);
}

TEST(IrBuilder, RegionsDoNotNest) {
  GraphBuilder b(Dim::fixed(1));
  b.begin_region(RegionKind::embedding());
  EXPECT_THROW(b.begin_region(RegionKind::logits()), Error);
  b.end_region();
  EXPECT_THROW(b.end_region(), Error);
}

// --- Weight descriptors against file bounds ---------------------------------

ErrorKind bounds_error(const Graph& graph, std::vector<uint64_t> file_sizes) {
  try {
    check_weight_bounds(graph, file_sizes);
  } catch (const Error& error) {
    return error.kind();
  }
  ADD_FAILURE() << "bounds check passed";
  return ErrorKind::Io;
}

TEST(IrWeightDescriptor, InBoundsPasses) {
  const Graph graph = build_dense();
  const WeightDescriptor& last = graph.weights.back();
  EXPECT_NO_THROW(check_weight_bounds(graph, std::vector<uint64_t>{last.offset + last.length}));
}

TEST(IrWeightDescriptor, PastTheEndIsOutOfBounds) {
  const Graph graph = build_dense();
  const WeightDescriptor& last = graph.weights.back();
  EXPECT_EQ(bounds_error(graph, {last.offset + last.length - 1}), ErrorKind::OutOfBounds);
  try {
    check_weight_bounds(graph, std::vector<uint64_t>{last.offset});
  } catch (const Error& error) {
    EXPECT_EQ(error.subject(), last.name);
    EXPECT_EQ(error.offset(), last.offset);
  }
}

TEST(IrWeightDescriptor, UnknownFileIsOutOfBounds) {
  Graph graph = build_dense();
  graph.weights[0].file = 1;
  EXPECT_EQ(bounds_error(graph, {1u << 20}), ErrorKind::OutOfBounds);
}

TEST(IrWeightDescriptor, OverflowingRangeIsOverflow) {
  Graph graph = build_dense();
  graph.weights[0].offset = UINT64_MAX - 2;
  EXPECT_EQ(bounds_error(graph, {UINT64_MAX}), ErrorKind::Overflow);
}

TEST(IrWeightDescriptor, EmptyRangeIsInvalid) {
  Graph graph = build_dense();
  graph.weights[0].length = 0;
  EXPECT_EQ(bounds_error(graph, {1u << 20}), ErrorKind::InvalidValue);
}

}  // namespace
}  // namespace synapse::ir
