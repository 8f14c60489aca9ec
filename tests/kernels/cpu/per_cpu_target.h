// Kernel tests that check every CPU target run as one test per target
// ("Targets/VectorOpsOnTarget.DotMatchesDoubleReference/avx512vnni"), and a
// target this CPU lacks is a skipped test saying so, not a loop that
// quietly leaves it out: a run on an older machine says what it could not
// check.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/cpu_target.h"

// In a fixture's SetUp: skips the test, with the reason, when this CPU
// cannot run code for `target`.
#define SYNAPSE_SKIP_UNLESS_CPU_RUNS(target)      \
  if (!::synapse::cpu::cpu_supports(target))      \
  GTEST_SKIP() << "CPU lacks " << ::synapse::cpu::to_string(target)

namespace synapse::cpu::target_test {

inline constexpr CpuTarget kCpuTargets[] = {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512,
                                            CpuTarget::Avx512Vnni};

class PerCpuTarget : public ::testing::TestWithParam<CpuTarget> {
 protected:
  void SetUp() override { SYNAPSE_SKIP_UNLESS_CPU_RUNS(GetParam()); }
};

inline std::string cpu_target_name(const ::testing::TestParamInfo<CpuTarget>& info) { return to_string(info.param); }

}  // namespace synapse::cpu::target_test

// Runs the TEST_Ps of `suite` (an alias of PerCpuTarget) once per target.
#define SYNAPSE_PER_CPU_TARGET(suite)                                                          \
  INSTANTIATE_TEST_SUITE_P(Targets, suite, ::testing::ValuesIn(::synapse::cpu::target_test::kCpuTargets), \
                           ::synapse::cpu::target_test::cpu_target_name)
