// The RoPE table against the direct formula of the reference (pow, then
// cos and sin per pair) at positions up to 131072, for the variants the
// models use: normal and NeoX layouts, Llama 3 frequency factors, theta
// from 10^4 to 10^6; and rotated heads equal to ref::rope.
#include "kernels/cpu/rope_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace synapse::cpu {
namespace {

constexpr int64_t kHeadDim = 128;

std::vector<float> llama3_factors() {
  std::vector<float> factors(kHeadDim / 2);
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = i < 20 ? 1.0f : (i < 40 ? 2.5f : 8.0f);
  return factors;
}

ref::RopeParams params(float theta, ir::RopeLayout layout, const float* factors) {
  ref::RopeParams p;
  p.theta = theta;
  p.layout = layout;
  p.head_dim = kHeadDim;
  p.rotary_dim = kHeadDim;
  p.freq_factors = factors;
  return p;
}

// Within one ulp of the direct value (cos and sin are at most 1 in size).
void expect_within_one_ulp(float got, float want) {
  EXPECT_LE(std::fabs(got - want), std::nextafter(std::fabs(want), 2.0f) - std::fabs(want)) << got << " vs " << want;
}

TEST(RopeTable, RotationsEqualTheDirectFormulaUpTo131072) {
  const std::vector<float> factors = llama3_factors();
  const std::vector<int32_t> positions{0, 1, 2, 17, 4095, 4096, 32767, 65536, 100003, 131071, 131072};
  for (float theta : {10000.0f, 500000.0f, 1000000.0f})
    for (const float* f : {static_cast<const float*>(nullptr), factors.data()}) {
      const ref::RopeParams p = params(theta, ir::RopeLayout::Normal, f);
      RopeTable table(static_cast<int64_t>(positions.size()), kHeadDim / 2);
      table.prepare(p, positions.data(), static_cast<int64_t>(positions.size()));
      for (size_t t = 0; t < positions.size(); ++t)
        for (int64_t pair = 0; pair < kHeadDim / 2; ++pair) {
          const double inv_freq = std::pow(static_cast<double>(theta), -2.0 * static_cast<double>(pair) / kHeadDim);
          float c, s;
          ref::rope_rotation(p, positions[t], pair, inv_freq, c, s);
          expect_within_one_ulp(table.cos_of(static_cast<int64_t>(t), pair), c);
          expect_within_one_ulp(table.sin_of(static_cast<int64_t>(t), pair), s);
        }
    }
}

TEST(RopeTable, AppliedRotationsEqualRefRope) {
  const std::vector<float> factors = llama3_factors();
  const std::vector<int32_t> positions{5, 131072, 77, 4096};
  const int64_t width = 3 * kHeadDim, tokens = static_cast<int64_t>(positions.size());
  std::vector<float> x(static_cast<size_t>(tokens * width));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  for (ir::RopeLayout layout : {ir::RopeLayout::Normal, ir::RopeLayout::NeoX})
    for (const float* f : {static_cast<const float*>(nullptr), factors.data()}) {
      ref::RopeParams p = params(1000000.0f, layout, f);
      p.rotary_dim = kHeadDim / 2;  // partial rotation: the rest is copied
      std::vector<float> want(x.size()), got(x.size());
      ref::rope(x.data(), positions.data(), tokens, width, p, want.data());
      RopeTable table(tokens, kHeadDim / 2);
      table.prepare(p, positions.data(), tokens);
      table.apply(x.data(), 0, 2, width, p, got.data());  // in two shares
      table.apply(x.data(), 2, tokens, width, p, got.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_FLOAT_EQ(got[i], want[i]) << i;
    }
}

TEST(RopeTable, NewPositionsOrParametersRecomputeTheRotations) {
  RopeTable table(2, kHeadDim / 2);
  const ref::RopeParams p = params(10000.0f, ir::RopeLayout::Normal, nullptr);
  const std::vector<int32_t> first{3, 4}, second{9, 4};
  table.prepare(p, first.data(), 2);
  table.prepare(p, second.data(), 2);
  float c, s;
  ref::rope_rotation(p, 9, 1, ref::rope_inv_freq(p, 1), c, s);
  EXPECT_EQ(table.cos_of(0, 1), c);
  const ref::RopeParams other = params(500000.0f, ir::RopeLayout::Normal, nullptr);
  table.prepare(other, second.data(), 2);
  ref::rope_rotation(other, 9, 1, ref::rope_inv_freq(other, 1), c, s);
  EXPECT_EQ(table.sin_of(0, 1), s);
}

}  // namespace
}  // namespace synapse::cpu
