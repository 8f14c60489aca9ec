// Activation quantization: every per-target block quantizer gives the
// portable one's bytes, including NaN, infinity and all-zero blocks.
#include "kernels/cpu/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/activation_quantizer.h"
#include "kernels/cpu/cpu_target.h"
#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

TEST(CpuActivation, SimdBlockQuantizerGivesTheScalarBytes) {
  SYNAPSE_SKIP_UNLESS_CPU_RUNS(CpuTarget::Avx2);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int block : {32, 256}) {
    const int64_t blocks = 9;
    std::vector<float> x(static_cast<size_t>(blocks * block));
    for (float& v : x) v = normal(rng);
    for (int i = 0; i < block; ++i) x[static_cast<size_t>(block + i)] = 0.0f;  // an all-zero block
    x[static_cast<size_t>(2 * block + 5)] = std::numeric_limits<float>::quiet_NaN();
    x[static_cast<size_t>(3 * block + 1)] = std::numeric_limits<float>::infinity();
    x[static_cast<size_t>(4 * block + 7)] = 2.5f;  // ties round to even
    x[static_cast<size_t>(4 * block + 8)] = 127.0f / 2.5f * 0.5f;
    std::vector<int8_t> a(x.size()), b(x.size());
    std::vector<float> amax_a(blocks), amax_b(blocks);
    quantizer::quantize_blocks_scalar(x.data(), blocks, block, a.data(), block, amax_a.data());
    quantizer::quantize_blocks_avx2(x.data(), blocks, block, b.data(), block, amax_b.data());
    EXPECT_EQ(a, b) << block;
    for (int64_t i = 0; i < blocks; ++i) EXPECT_EQ(amax_a[i], amax_b[i]) << block << " block " << i;
  }
}

TEST(CpuActivation, Q8BlocksReconstructTheRowWithinHalfAStep) {
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(96);
  for (float& v : x) v = normal(rng);
  std::vector<uint8_t> bytes(activation_row_bytes(ActivationFormat::Q8, 96));
  quantize_activation_row(ActivationFormat::Q8, x.data(), 96, bytes.data());
  const auto* blocks = reinterpret_cast<const ActQ8Block*>(bytes.data());
  for (int b = 0; b < 3; ++b) {
    int32_t sum = 0;
    for (int i = 0; i < 32; ++i) {
      sum += blocks[b].qs[i];
      EXPECT_NEAR(blocks[b].d * blocks[b].qs[i], x[b * 32 + i], blocks[b].d * 0.51f + 1e-3f);
    }
    EXPECT_EQ(blocks[b].sum, sum);
  }
}

}  // namespace
}  // namespace synapse::cpu
