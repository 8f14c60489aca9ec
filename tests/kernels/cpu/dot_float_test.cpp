// F32 / F16 / BF16 dot tiles on each CPU target (a test per target): results
// against a double-precision reference over the dequantized rows, and batch
// invariance (a pair's float is the same bits whatever tile computes it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "encoding/encoding.h"
#include "encoding/fp16.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/dot_kernel.h"
#include "kernels/cpu/dot_test_support.h"
#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using DotFloatKernel = target_test::PerCpuTarget;
using DotFloatTile = target_test::PerCpuTarget;

constexpr Encoding kFloatEncodings[] = {Encoding::F32, Encoding::F16, Encoding::BF16};

using dot_test::Operands;

// Weights with an outlier and an fp16 subnormal, rows at odd addresses.
Operands make_float_operands(Encoding encoding, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  // An odd stride: rows 1 and 3 start at odd addresses.
  Operands ops = dot_test::allocate_operands(n, row_bytes(encoding, n) + 5, (n + 3) * sizeof(float));
  std::vector<float> values(n);
  for (int r = 0; r < kMaxTileRows; ++r) {
    for (float& v : values) v = uniform(rng);
    values[(r * 37) % n] = 60.0f;  // an outlier
    // fp16 subnormals must convert exactly too.
    if (n > 3) values[(r * 11 + 3) % n] = 3e-6f;
    quantize_row(encoding, values.data(), ops.row(r), n);
    dot_test::record_weight_row(ops, encoding, r);
  }
  for (int t = 0; t < kMaxTileTokens; ++t) {
    for (float& v : values) v = 3.0f * uniform(rng);
    std::memcpy(ops.token(t), values.data(), n * sizeof(float));
    ops.x_values[t].assign(values.begin(), values.end());
  }
  return ops;
}

TEST(DotFloatKernel, ServesF32F16AndBF16WithF32ActivationsOnEveryTarget) {
  for (Encoding encoding : kFloatEncodings) {
    for (CpuTarget target : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512, CpuTarget::Avx512Vnni}) {
      const DotKernel kernel = find_float_dot_kernel(encoding, target);
      EXPECT_NE(kernel.tile, nullptr) << to_string(target);
      EXPECT_EQ(kernel.activation, ActivationFormat::F32);
      EXPECT_EQ(find_dot_kernel(encoding, target).tile, kernel.tile);
    }
  }
  EXPECT_EQ(find_float_dot_kernel(Encoding::Q8_0, CpuTarget::Scalar).tile, nullptr);
  EXPECT_EQ(find_float_dot_kernel(Encoding::F64, CpuTarget::Avx2).tile, nullptr);
}

TEST_P(DotFloatKernel, MatchesDoubleReferenceOnEveryShape) {
  for (Encoding encoding : kFloatEncodings)
    for (int64_t n : {1, 7, 31, 64, 896, 4097})
      dot_test::expect_tiles_match_reference(encoding, GetParam(), make_float_operands(encoding, n, static_cast<uint32_t>(n)));
}

TEST_P(DotFloatTile, EveryTileShapeAndPositionGivesTheBitsOfASinglePair) {
  for (Encoding encoding : kFloatEncodings)
    for (int64_t n : {7, 64, 896 + 13})
      dot_test::expect_tiles_batch_invariant(encoding, GetParam(), make_float_operands(encoding, n, 1234));
}

// One and several passes of rows; rows that end in a partial step (the
// zero-padded tail), rows shorter than one step.
TEST_P(DotFloatTile, MatvecRowsHaveTheBitsOfTheTile) {
  for (Encoding encoding : kFloatEncodings) {
    const DotKernel kernel = find_float_dot_kernel(encoding, GetParam());
    ASSERT_TRUE(kernel.matvec) << to_string(GetParam());
    for (int64_t passes : {1, 3})
      for (int64_t n : {7, 64, 896, 896 + 13, 4864})
        dot_test::expect_matvec_matches_tile(encoding, GetParam(), passes * kernel.matvec_rows, n);
  }
}

TEST_P(DotFloatTile, WritesOnlyItsRowsAndTokens) {
  dot_test::expect_tiles_write_only_their_outputs(Encoding::F16, GetParam(), make_float_operands(Encoding::F16, 33, 5));
}

TEST_P(DotFloatTile, F16InfinityAndNaNWeightsPropagate) {
  constexpr int64_t kN = 21;  // the specials land in the zero-padded tail too
  std::vector<uint16_t> infinite(kN, fp32_to_fp16(0.5f)), not_a_number(kN, fp32_to_fp16(0.5f));
  infinite[3] = 0x7c00;
  not_a_number[kN - 1] = 0x7e00;
  const std::vector<float> x(kN, 1.0f);
  const CpuTarget target = GetParam();
  const DotKernel kernel = find_float_dot_kernel(Encoding::F16, target);
  float y[2];
  kernel.tile(reinterpret_cast<const uint8_t*>(infinite.data()), 0, 1, reinterpret_cast<const uint8_t*>(x.data()),
              0, 1, kN, &y[0], 1);
  kernel.tile(reinterpret_cast<const uint8_t*>(not_a_number.data()), 0, 1,
              reinterpret_cast<const uint8_t*>(x.data()), 0, 1, kN, &y[1], 1);
  EXPECT_EQ(y[0], std::numeric_limits<float>::infinity()) << to_string(target);
  EXPECT_TRUE(std::isnan(y[1])) << to_string(target);
}

SYNAPSE_PER_CPU_TARGET(DotFloatKernel);
SYNAPSE_PER_CPU_TARGET(DotFloatTile);

}  // namespace
}  // namespace synapse::cpu
