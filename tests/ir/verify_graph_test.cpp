// One rejecting test per reference, SSA, order and operation rule.
#include <gtest/gtest.h>

#include "ir/tiny_graphs.h"

namespace synapse::ir {
namespace {

using testing::build_dense;
using testing::build_moe;
using testing::node;
using testing::node_named;
using testing::value_named;
using testing::verify_error;
using testing::weight_named;

TEST(IrVerifyGraph, OperandNamingNoValueIsUnknownReference) {
  Graph graph = build_dense();
  node(graph, "q").operands[0] = ValueId{999};
  EXPECT_EQ(verify_error(graph), VerifyError::UnknownReference);
}

TEST(IrVerifyGraph, WeightWithoutDescriptorIsUnknownReference) {
  Graph graph = build_dense();
  std::get<MatMul>(node(graph, "q").op).weight = TensorId{static_cast<uint32_t>(graph.weights.size())};
  EXPECT_EQ(verify_error(graph), VerifyError::UnknownReference);
}

TEST(IrVerifyGraph, ValueDefinedByTwoNodes) {
  Graph graph = build_dense();
  node(graph, "k").result = value_named(graph, "q");
  EXPECT_EQ(verify_error(graph), VerifyError::ValueDefinedTwice);
}

TEST(IrVerifyGraph, ValueWithoutDefiningNode) {
  Graph graph = build_dense();
  graph.values.push_back(graph.values[value_named(graph, "q").index]);
  EXPECT_EQ(verify_error(graph), VerifyError::UndefinedValue);
}

TEST(IrVerifyGraph, UseBeforeDefinitionIsNotTopological) {
  Graph graph = build_dense();
  // Move the attention norm after the q projection that uses it.
  const uint32_t norm = node_named(graph, "attn_norm").index;
  const uint32_t q = node_named(graph, "q").index;
  std::swap(graph.nodes[norm], graph.nodes[q]);
  std::swap(graph.values[value_named(graph, "attn_norm").index].producer,
            graph.values[value_named(graph, "q").index].producer);
  EXPECT_EQ(verify_error(graph), VerifyError::NotTopological);
}

TEST(IrVerifyGraph, CyclicUsesAreACycle) {
  Graph graph = build_dense();
  // The attention norm reads h1, which depends on the norm itself.
  node(graph, "attn_norm").operands[0] = value_named(graph, "h1");
  EXPECT_EQ(verify_error(graph), VerifyError::Cycle);
}

TEST(IrVerifyGraph, UnboundSymbolicDim) {
  Graph graph = build_dense();
  graph.bounds.erase("max_ctx");
  EXPECT_EQ(verify_error(graph), VerifyError::UnboundSymbol);
}

TEST(IrVerifyGraph, WrongOperandCount) {
  Graph graph = build_dense();
  node(graph, "h1").operands.push_back(value_named(graph, "h0"));
  EXPECT_EQ(verify_error(graph), VerifyError::OperandCount);
}

TEST(IrVerifyGraph, EncodedNormWeightIsWrongDType) {
  Graph graph = build_dense();
  graph.weights[weight_named(graph, "blk.0.attn_norm").index].encoding = Encoding::Q8_0;
  EXPECT_EQ(verify_error(graph), VerifyError::OperandDType);
}

TEST(IrVerifyGraph, IntegerOperandOfFloatOpIsWrongDType) {
  Graph graph = build_dense();
  node(graph, "h1").operands[1] = value_named(graph, "ids");
  EXPECT_EQ(verify_error(graph), VerifyError::OperandDType);
}

TEST(IrVerifyGraph, MatMulInDimMustMatchWeight) {
  Graph graph = build_dense();
  graph.weights[weight_named(graph, "blk.0.attn_q").index].shape = {8, 9};
  EXPECT_EQ(verify_error(graph), VerifyError::OperandShape);
}

TEST(IrVerifyGraph, RmsNormWeightLengthMustDivideLastDim) {
  Graph graph = build_dense();
  graph.weights[weight_named(graph, "blk.0.ffn_norm").index].shape = {7};
  EXPECT_EQ(verify_error(graph), VerifyError::OperandShape);
}

TEST(IrVerifyGraph, RmsNormWithAGroupWeightNormalisesEachGroup) {
  Graph graph = build_dense();
  graph.weights[weight_named(graph, "blk.0.ffn_norm").index].shape = {4};  // two groups of 4
  EXPECT_NO_THROW(verify(graph));
}

TEST(IrVerifyGraph, AddOperandsMustHaveOneShape) {
  Graph graph = build_dense();
  node(graph, "h2").operands[1] = value_named(graph, "gate");  // [T, ffn] + [T, d]
  EXPECT_EQ(verify_error(graph), VerifyError::OperandShape);
}

TEST(IrVerifyGraph, AttentionWidthsMustMatchHeads) {
  Graph graph = build_dense();
  std::get<CausalAttention>(node(graph, "attn").op).kv_heads = 2;  // k is [Context, 1 * 4]
  EXPECT_EQ(verify_error(graph), VerifyError::OperandShape);
}

TEST(IrVerifyGraph, AttributesOutOfDomain) {
  Graph eps = build_dense();
  std::get<RmsNorm>(node(eps, "ffn_norm").op).eps = 0.0f;
  EXPECT_EQ(verify_error(eps), VerifyError::InvalidAttribute);

  Graph heads = build_dense();
  std::get<CausalAttention>(node(heads, "attn").op).kv_heads = 3;
  EXPECT_EQ(verify_error(heads), VerifyError::InvalidAttribute);

  Graph rope = build_dense();
  std::get<Rope>(node(rope, "q_rope").op).rotary_dim = 3;
  EXPECT_EQ(verify_error(rope), VerifyError::InvalidAttribute);

  Graph route = build_moe();
  std::get<TopKRoute>(node(route, "gates").op).k = 3;  // of 2 experts
  EXPECT_EQ(verify_error(route), VerifyError::InvalidAttribute);
}

TEST(IrVerifyGraph, ValueTypeMustBeWhatTheOpProduces) {
  Graph graph = build_dense();
  graph.values[value_named(graph, "q").index].type.dtype = DType::F16;
  EXPECT_EQ(verify_error(graph), VerifyError::ResultTypeMismatch);
}

TEST(IrVerifyGraph, RopePositionsMustBeTheEntryInput) {
  Graph graph = build_dense();
  node(graph, "q_rope").operands[1] = value_named(graph, "ids");  // I32 [Tokens] too
  EXPECT_EQ(verify_error(graph), VerifyError::PositionsNotEntry);
}

}  // namespace
}  // namespace synapse::ir
