// SiLU and SwiGLU with the vectorized exp, on each CPU target (a test per
// target): within the stated error of the exact value over a wide range
// (including inputs where exp overflows), no NaN or inf surprises, and an
// element's result independent of the length it is computed in.
#include "kernels/cpu/silu_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using SiluOpsOnTarget = target_test::PerCpuTarget;

double exact_silu(float x) { return double{x} / (1.0 + std::exp(-double{x})); }

// The stated bound: 4e-7 relative, or 1e-35 absolute for tiny results.
void expect_close_to_exact(float got, float x) {
  const double want = exact_silu(x);
  const double error = std::fabs(double{got} - want);
  EXPECT_TRUE(error <= 4e-7 * std::fabs(want) || error <= 1e-35) << "x=" << x << " got " << got << " want " << want;
}

std::vector<float> wide_range() {
  std::vector<float> xs;
  for (float x = -200.0f; x <= 200.0f; x += 0.01171875f) xs.push_back(x);
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-3f, -1e-3f, 88.7f, -88.7f, 104.0f, -104.0f, 1e10f, -1e10f,
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()})
    xs.push_back(x);
  return xs;
}

TEST(SiluOps, EveryTargetHasBothFunctions) {
  for (CpuTarget target : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512, CpuTarget::Avx512Vnni}) {
    EXPECT_NE(silu_ops(target).silu, nullptr) << to_string(target);
    EXPECT_NE(silu_ops(target).swiglu, nullptr) << to_string(target);
  }
}

TEST_P(SiluOpsOnTarget, SiluIsWithinTheStatedErrorOverAWideRange) {
  const std::vector<float> xs = wide_range();
  const CpuTarget target = GetParam();
  std::vector<float> ys(xs.size());
  silu_ops(target).silu(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(std::isfinite(ys[i])) << to_string(target) << " x=" << xs[i];
    expect_close_to_exact(ys[i], xs[i]);
  }
}

TEST_P(SiluOpsOnTarget, InfinityAndNanPassThroughAsLibmWould) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs{inf, std::numeric_limits<float>::quiet_NaN()};
  const CpuTarget target = GetParam();
  std::vector<float> ys(xs.size());
  silu_ops(target).silu(xs.data(), ys.data(), 2);
  EXPECT_EQ(ys[0], inf) << to_string(target);
  EXPECT_TRUE(std::isnan(ys[1])) << to_string(target);
}

TEST_P(SiluOpsOnTarget, SwigluMultipliesSiluOfGateByUp) {
  const std::vector<float> gate = wide_range();
  std::vector<float> up(gate.size());
  for (size_t i = 0; i < up.size(); ++i) up[i] = 0.25f + static_cast<float>(i % 7);
  const CpuTarget target = GetParam();
  std::vector<float> silu(gate.size()), y(gate.size());
  silu_ops(target).silu(gate.data(), silu.data(), static_cast<int64_t>(gate.size()));
  silu_ops(target).swiglu(gate.data(), up.data(), y.data(), static_cast<int64_t>(gate.size()));
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], silu[i] * up[i]) << to_string(target) << " i=" << i;
}

TEST_P(SiluOpsOnTarget, AnElementsResultDoesNotDependOnTheLength) {
  std::vector<float> xs(37);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -9.0f + 0.5f * static_cast<float>(i);
  const CpuTarget target = GetParam();
  std::vector<float> whole(xs.size());
  silu_ops(target).silu(xs.data(), whole.data(), static_cast<int64_t>(xs.size()));
  for (int64_t n = 1; n <= static_cast<int64_t>(xs.size()); ++n) {
    std::vector<float> part(static_cast<size_t>(n));
    silu_ops(target).silu(xs.data(), part.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(part[i], whole[i]) << to_string(target) << " n=" << n;
  }
}

SYNAPSE_PER_CPU_TARGET(SiluOpsOnTarget);

}  // namespace
}  // namespace synapse::cpu
