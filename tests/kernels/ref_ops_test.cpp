// The reference ops against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/linear.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "kernels/ref/routing.h"
#include "synapse/error.h"

namespace synapse::ref {
namespace {

constexpr float kTol = 1e-6f;

ir::Rope rope_attributes(ir::RopeLayout layout, uint32_t head_dim, uint32_t rotary_dim,
                         ir::RopeScaling scaling = ir::RopeNoScaling{}) {
  return ir::Rope{10000.0f, layout, head_dim, rotary_dim, scaling};
}

std::vector<float> rotated(const std::vector<float>& x, int32_t position, const RopeParams& params) {
  std::vector<float> y(x.size());
  rope(x.data(), &position, 1, static_cast<int64_t>(x.size()), params, y.data());
  return y;
}

TEST(RefOpsNorm, RmsNormScalesByInverseRootMeanSquare) {
  const std::vector<float> x{1, 2, 3, 4}, w{1, 1, 2, 1};
  std::vector<float> y(4);
  rms_norm(x.data(), 1, 4, w.data(), 1e-5f, y.data(), Accumulation::F32);
  const float scale = 1.0f / std::sqrt(7.5f + 1e-5f);  // mean(x^2) = 30 / 4
  EXPECT_NEAR(y[0], 1 * scale, kTol);
  EXPECT_NEAR(y[2], 3 * scale * 2, kTol);
  EXPECT_NEAR(y[3], 4 * scale, kTol);
}

TEST(RefOpsNorm, LayerNormCentersAndScales) {
  const std::vector<float> x{1, 3}, w{1, 2}, b{0.5f, 0};
  std::vector<float> y(2);
  layer_norm(x.data(), 1, 2, w.data(), b.data(), 1e-6f, y.data(), Accumulation::F64);
  EXPECT_NEAR(y[0], -1.0f + 0.5f, 1e-5f);  // mean 2, var 1
  EXPECT_NEAR(y[1], 2.0f, 1e-5f);
}

TEST(RefOpsRope, NormalLayoutRotatesAdjacentPairs) {
  const RopeParams p = rope_params(rope_attributes(ir::RopeLayout::Normal, 4, 4), nullptr);
  // Pair 0 turns by pos * 1, pair 1 by pos * 10000^(-2/4) = pos * 0.01.
  const std::vector<float> y = rotated({1, 0, 1, 0}, 1, p);
  EXPECT_NEAR(y[0], std::cos(1.0f), kTol);
  EXPECT_NEAR(y[1], std::sin(1.0f), kTol);
  EXPECT_NEAR(y[2], std::cos(0.01f), kTol);
  EXPECT_NEAR(y[3], std::sin(0.01f), kTol);
}

TEST(RefOpsRope, NeoxLayoutRotatesHalves) {
  const RopeParams p = rope_params(rope_attributes(ir::RopeLayout::NeoX, 4, 4), nullptr);
  // Pairs (0, 2) and (1, 3).
  const std::vector<float> y = rotated({1, 1, 0, 0}, 2, p);
  EXPECT_NEAR(y[0], std::cos(2.0f), kTol);
  EXPECT_NEAR(y[2], std::sin(2.0f), kTol);
  EXPECT_NEAR(y[1], std::cos(0.02f), kTol);
  EXPECT_NEAR(y[3], std::sin(0.02f), kTol);
}

TEST(RefOpsRope, PartialRotaryLeavesTheRestAndEachHead) {
  const RopeParams p = rope_params(rope_attributes(ir::RopeLayout::Normal, 4, 2), nullptr);
  const std::vector<float> y = rotated({1, 0, 7, 8, 0, 1, 5, 6}, 3, p);  // two heads
  EXPECT_NEAR(y[0], std::cos(3.0f), kTol);
  EXPECT_NEAR(y[1], std::sin(3.0f), kTol);
  EXPECT_EQ(y[2], 7);
  EXPECT_EQ(y[3], 8);
  EXPECT_NEAR(y[4], -std::sin(3.0f), kTol);
  EXPECT_NEAR(y[5], std::cos(3.0f), kTol);
  EXPECT_EQ(y[6], 5);
}

TEST(RefOpsRope, LinearScalingDividesPositions) {
  const RopeParams p = rope_params(rope_attributes(ir::RopeLayout::Normal, 2, 2, ir::RopeLinearScaling{4}), nullptr);
  const std::vector<float> y = rotated({1, 0}, 2, p);
  EXPECT_NEAR(y[0], std::cos(0.5f), kTol);
  EXPECT_NEAR(y[1], std::sin(0.5f), kTol);
}

TEST(RefOpsRope, Llama3FreqFactorsDivideTheFrequency) {
  const std::vector<float> factors{2.0f, 8.0f};
  const RopeParams p =
      rope_params(rope_attributes(ir::RopeLayout::NeoX, 4, 4, ir::RopeLlama3Scaling{}), factors.data());
  const std::vector<float> y = rotated({1, 1, 0, 0}, 4, p);
  EXPECT_NEAR(y[0], std::cos(4.0f / 2), kTol);
  EXPECT_NEAR(y[1], std::cos(0.04f / 8), kTol);
  EXPECT_NEAR(y[3], std::sin(0.04f / 8), kTol);
}

TEST(RefOpsRope, YarnWithoutRampIsLinearInterpolationTimesAttnFactor) {
  const ir::RopeYarnScaling yarn{4.0f, 4096, 0.0f, 1.5f, 32.0f, 1.0f};
  const RopeParams p = rope_params(rope_attributes(ir::RopeLayout::Normal, 2, 2, yarn), nullptr);
  const std::vector<float> y = rotated({1, 0}, 2, p);
  EXPECT_NEAR(y[0], 1.5f * std::cos(0.5f), kTol);
  EXPECT_NEAR(y[1], 1.5f * std::sin(0.5f), kTol);
}

// Keys and values in one page; row p of a [count, width] buffer.
StateRows contiguous(const std::vector<float>& rows, int64_t width, const uint8_t* const* page) {
  const int64_t count = static_cast<int64_t>(rows.size()) / width;
  return f32_rows(page, count, width, count);
}

TEST(RefOpsAttention, GroupedQueryCausalSoftmax) {
  // 4 query heads, 2 kv heads, head_dim 1: heads 0,1 read kv head 0; 2,3 kv head 1.
  const std::vector<float> keys{1, 0, 0, 1};    // pos 0: (1, 0); pos 1: (0, 1)
  const std::vector<float> values{1, 10, 3, 30};
  const auto* k_page = reinterpret_cast<const uint8_t*>(keys.data());
  const auto* v_page = reinterpret_cast<const uint8_t*>(values.data());
  const StateRows k = contiguous(keys, 2, &k_page), v = contiguous(values, 2, &v_page);
  const std::vector<float> q{1, 2, 3, 4, 1, 2, 3, 4};  // tokens at positions 0 and 1
  const std::vector<int32_t> positions{0, 1};
  std::vector<float> out(8), scores(2);
  causal_attention(q.data(), positions.data(), 2, k, v, AttentionShape{4, 2, 1, 0.5f}, out.data(), scores.data(),
                   Accumulation::F32);
  // Position 0 sees only key 0.
  EXPECT_NEAR(out[0], 1, kTol);
  EXPECT_NEAR(out[1], 1, kTol);
  EXPECT_NEAR(out[2], 10, kTol);
  EXPECT_NEAR(out[3], 10, kTol);
  // Position 1, head 1 (q = 2, kv head 0): scores (2*1, 2*0) * 0.5 = (1, 0).
  const float w0 = std::exp(1.0f) / (std::exp(1.0f) + 1.0f);
  EXPECT_NEAR(out[5], w0 * 1 + (1 - w0) * 3, 1e-5f);
  // Head 3 (q = 4, kv head 1): scores (0, 4) * 0.5 = (0, 2).
  const float w1 = std::exp(2.0f) / (std::exp(2.0f) + 1.0f);
  EXPECT_NEAR(out[7], (1 - w1) * 10 + w1 * 30, 1e-5f);
}

TEST(RefOpsAttention, UnwrittenPositionsAreMasked) {
  const std::vector<float> keys{5, 1}, values{100, 7};
  const uint64_t written = 0b10;  // row 0 a hole
  const auto* k_page = reinterpret_cast<const uint8_t*>(keys.data());
  const auto* v_page = reinterpret_cast<const uint8_t*>(values.data());
  const uint64_t* bits = &written;
  StateRows k = f32_rows(&k_page, 2, 1, 2), v = f32_rows(&v_page, 2, 1, 2);
  k.written = v.written = &bits;
  const float q = 1;
  const int32_t position = 1;
  float out = 0, scores[2];
  causal_attention(&q, &position, 1, k, v, AttentionShape{1, 1, 1, 1.0f}, &out, scores, Accumulation::F64);
  EXPECT_NEAR(out, 7, kTol);
}

// for_each_row visits rows in order across page boundaries with row() and
// has()'s answers, and a null row in a page never mapped.
TEST(RefOpsAttention, ForEachRowMatchesRowAndHasAcrossPages) {
  std::vector<uint8_t> page0(3 * 8), page2(3 * 8);
  const uint8_t* pages[] = {page0.data(), nullptr, page2.data()};
  const uint64_t written0 = 0b101, written2 = 0b011;
  const uint64_t* written[] = {&written0, nullptr, &written2};
  const StateRows rows{pages, written, 3, 2, 9, Encoding::F32, 8};
  std::vector<int64_t> seen;
  rows.for_each_row(1, 7, [&](int64_t p, const uint8_t* row, bool present) {
    seen.push_back(p);
    EXPECT_EQ(present, rows.has(p)) << p;
    EXPECT_EQ(row, p / 3 == 1 ? nullptr : rows.row(p)) << p;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(RefOpsActivation, SwiGluIsSiluOfGateTimesUp) {
  const std::vector<float> gate{1, 0, -2}, up{3, 5, 2};
  std::vector<float> y(3);
  swiglu(gate.data(), up.data(), y.data(), 3);
  EXPECT_NEAR(y[0], 3.0f / (1.0f + std::exp(-1.0f)), kTol);
  EXPECT_NEAR(y[1], 0, kTol);
  EXPECT_NEAR(y[2], 2 * -2.0f / (1.0f + std::exp(2.0f)), kTol);
}

TEST(RefOpsActivation, SoftmaxAndGelu) {
  const std::vector<float> x{0, std::log(3.0f)};
  std::vector<float> y(2);
  softmax(x.data(), 1, 2, y.data(), Accumulation::F32);
  EXPECT_NEAR(y[0], 0.25f, kTol);
  EXPECT_NEAR(y[1], 0.75f, kTol);
  const float one = 1.0f;
  float g = 0;
  gelu(&one, &g, 1, ir::GeluApproximation::Erf);
  EXPECT_NEAR(g, 0.8413447f, 1e-6f);
}

TEST(RefOpsLinear, MatMulWithBias) {
  const std::vector<float> w{1, 2, 3, 4, 5, 6};  // [2 out, 3 in]
  const std::vector<float> x{1, 0, -1, 2, 1, 0}, bias{0.5f, -1};
  const EncodedMatrix m{Encoding::F32, reinterpret_cast<const uint8_t*>(w.data()), 2, 3, 12};
  std::vector<float> y(4), row(3);
  matmul(x.data(), 2, m, bias.data(), y.data(), row.data(), Accumulation::F32);
  EXPECT_EQ(y, (std::vector<float>{-2 + 0.5f, -2 - 1, 4 + 0.5f, 13 - 1}));
}

TEST(RefOpsLinear, MatMulOnQ80EqualsDequantizedFloatMatMul) {
  constexpr int64_t kOut = 3, kIn = 64, kTokens = 2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<float> w(kOut * kIn), x(kTokens * kIn);
  for (float& v : w) v = unit(rng);
  for (float& v : x) v = unit(rng);
  const uint64_t stride = row_bytes(Encoding::Q8_0, kIn);
  std::vector<uint8_t> encoded(stride * kOut);
  for (int64_t o = 0; o < kOut; ++o) quantize_row(Encoding::Q8_0, &w[o * kIn], &encoded[o * stride], kIn);

  std::vector<float> y(kTokens * kOut), row(kIn);
  matmul(x.data(), kTokens, EncodedMatrix{Encoding::Q8_0, encoded.data(), kOut, kIn, stride}, nullptr, y.data(),
         row.data(), Accumulation::F64);
  for (int64_t o = 0; o < kOut; ++o) {
    std::vector<float> dequantized(kIn);
    dequantize_row(Encoding::Q8_0, &encoded[o * stride], dequantized.data(), kIn);
    for (int64_t t = 0; t < kTokens; ++t) {
      double expected = 0;
      for (int64_t i = 0; i < kIn; ++i) expected += double{x[t * kIn + i]} * dequantized[i];
      EXPECT_NEAR(y[t * kOut + o], expected, 1e-5);
    }
    // The weight really is quantized: its rows are not the floats we started from.
    EXPECT_NE(dequantized, std::vector<float>(w.begin() + o * kIn, w.begin() + (o + 1) * kIn));
  }
}

// The oracle must not depend on how many tokens a step holds: a row of many
// tokens (summed side by side) equals the same row alone, bit for bit.
TEST(RefOpsLinear, MatMulOfManyTokensHasEachTokensBitsAlone) {
  constexpr int64_t kOut = 5, kIn = 333, kTokens = 19;  // two groups of eight and three more
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<float> w(kOut * kIn), x(kTokens * kIn), bias(kOut);
  for (float& v : w) v = unit(rng);
  for (float& v : x) v = unit(rng) * 1e3f;
  for (float& v : bias) v = unit(rng);
  const EncodedMatrix m{Encoding::F32, reinterpret_cast<const uint8_t*>(w.data()), kOut, kIn, kIn * sizeof(float)};
  std::vector<float> row(kIn);
  for (const Accumulation acc : {Accumulation::F32, Accumulation::F64}) {
    std::vector<float> all(kTokens * kOut), alone(kOut);
    matmul(x.data(), kTokens, m, bias.data(), all.data(), row.data(), acc);
    for (int64_t t = 0; t < kTokens; ++t) {
      matmul(x.data() + t * kIn, 1, m, bias.data(), alone.data(), row.data(), acc);
      for (int64_t o = 0; o < kOut; ++o) EXPECT_EQ(all[t * kOut + o], alone[o]) << "token " << t << " row " << o;
    }
  }
}

TEST(RefOpsLinear, EmbeddingRejectsIdsOutsideTheTable) {
  const std::vector<float> table{1, 2, 3, 4};
  const EncodedMatrix m{Encoding::F32, reinterpret_cast<const uint8_t*>(table.data()), 2, 2, 8};
  std::vector<float> y(2);
  const int32_t id = 1, bad = 2;
  embedding(&id, 1, m, y.data());
  EXPECT_EQ(y, (std::vector<float>{3, 4}));
  EXPECT_THROW(embedding(&bad, 1, m, y.data()), Error);
}

TEST(RefOpsAccumulation, F64SumsWithoutCancellation) {
  const std::vector<float> a{1e8f, 1, -1e8f}, ones{1, 1, 1};
  EXPECT_EQ(dot(Accumulation::F64, a.data(), ones.data(), 3), 1.0f);
  EXPECT_EQ(dot(Accumulation::F32, a.data(), ones.data(), 3), 0.0f);
}

TEST(RefOpsRouting, TopKKeepsHighestWithLowestIndexOnTies) {
  const std::vector<float> scores{0.2f, 0.4f, 0.4f, 0.0f, 0.1f, 0.3f, 0.6f, 0.0f};
  std::vector<float> gates(8);
  std::vector<uint32_t> scratch(8);
  ir::TopKRoute route{1, ir::TiePolicy::LowestIndex, false, std::nullopt, ir::RouteScope::PerToken};
  top_k_route(scores.data(), 2, 4, route, gates.data(), scratch);
  EXPECT_EQ(gates, (std::vector<float>{0, 0.4f, 0, 0, 0, 0, 0.6f, 0}));
  route.k = 2;
  route.normalize_top_k = true;
  top_k_route(scores.data(), 2, 4, route, gates.data(), scratch);
  EXPECT_NEAR(gates[1], 0.5f, kTol);
  EXPECT_NEAR(gates[2], 0.5f, kTol);
  EXPECT_NEAR(gates[5], 1.0f / 3, kTol);
  EXPECT_NEAR(gates[6], 2.0f / 3, kTol);
}

TEST(RefOpsRouting, CapacityDropsLaterTokens) {
  const std::vector<float> scores{0.9f, 0.1f, 0.8f, 0.2f};
  std::vector<float> gates(4);
  std::vector<uint32_t> scratch(4);
  const ir::TopKRoute route{1, ir::TiePolicy::LowestIndex, false, 1u, ir::RouteScope::PerToken};
  top_k_route(scores.data(), 2, 2, route, gates.data(), scratch);
  EXPECT_EQ(gates, (std::vector<float>{0.9f, 0, 0, 0}));
}

}  // namespace
}  // namespace synapse::ref
