// The attention kernel's float primitives on each CPU target (a test per
// target), for lengths that are and are not multiples of the vector width.
// Buffers are exactly n long, so the sanitizer build catches stray accesses.
#include "kernels/cpu/vector_ops.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using VectorOpsOnTarget = target_test::PerCpuTarget;

constexpr int64_t kLengths[] = {0, 1, 7, 16, 31, 64, 129, 1000};

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  return values;
}

TEST(VectorOps, EveryTargetHasAllThreePrimitives) {
  for (CpuTarget target : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512, CpuTarget::Avx512Vnni}) {
    const VectorOps ops = vector_ops(target);
    EXPECT_NE(ops.dot, nullptr) << to_string(target);
    EXPECT_NE(ops.axpy, nullptr) << to_string(target);
    EXPECT_NE(ops.scale, nullptr) << to_string(target);
  }
}

TEST_P(VectorOpsOnTarget, DotMatchesDoubleReference) {
  const CpuTarget target = GetParam();
  const VectorOps ops = vector_ops(target);
  for (int64_t n : kLengths) {
    const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
    double dot = 0.0, magnitude = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      dot += double(a[i]) * b[i];
      magnitude += std::fabs(double(a[i]) * b[i]);
    }
    EXPECT_NEAR(ops.dot(a.data(), b.data(), n), dot, 1e-5 * magnitude) << to_string(target) << " n=" << n;
  }
}

TEST_P(VectorOpsOnTarget, AxpyAddsScaledVectorWithinOneRounding) {
  const CpuTarget target = GetParam();
  const VectorOps ops = vector_ops(target);
  for (int64_t n : kLengths) {
    const std::vector<float> x = random_floats(n, 3), y0 = random_floats(n, 4);
    std::vector<float> y = y0;
    ops.axpy(0.75f, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double expected = 0.75 * x[i] + y0[i];
      // At most two roundings (multiply and add where there is no FMA).
      EXPECT_NEAR(y[i], expected, 2.5e-7 * (std::fabs(0.75 * x[i]) + std::fabs(y0[i])))
          << to_string(target) << " n=" << n << " i=" << i;
    }
  }
}

TEST_P(VectorOpsOnTarget, AxpyElementDoesNotDependOnTheLength) {
  const std::vector<float> x = random_floats(40, 5), y0 = random_floats(40, 6);
  const CpuTarget target = GetParam();
  const VectorOps ops = vector_ops(target);
  std::vector<float> full = y0;
  ops.axpy(-1.3f, x.data(), full.data(), 40);
  for (int64_t n = 1; n < 40; ++n) {
    std::vector<float> prefix(y0.begin(), y0.begin() + n);
    ops.axpy(-1.3f, x.data(), prefix.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(prefix[i]), std::bit_cast<uint32_t>(full[i]))
          << to_string(target) << " n=" << n << " i=" << i;
  }
}

TEST_P(VectorOpsOnTarget, ScaleMultipliesEachElementExactlyOnce) {
  const CpuTarget target = GetParam();
  const VectorOps ops = vector_ops(target);
  for (int64_t n : kLengths) {
    const std::vector<float> y0 = random_floats(n, 7);
    std::vector<float> y = y0;
    ops.scale(0.3f, y.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(0.3f * y0[i]))
          << to_string(target) << " n=" << n << " i=" << i;
  }
}

SYNAPSE_PER_CPU_TARGET(VectorOpsOnTarget);

}  // namespace
}  // namespace synapse::cpu
