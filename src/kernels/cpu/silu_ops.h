// SiLU and SwiGLU for the CPU kernels, compiled once per CpuTarget (Google
// Highway, see hwy_targets.h), with Highway's vectorized exp instead of
// libm's expf per element. silu(x) = x / (1 + exp(-x)) with exp within 1
// ulp (argument clamped to exp's valid range, where exp(104) is already
// +inf): the result is within 4e-7 relative error of the exact value for
// every finite x, or 1e-35 absolute where the exact value is smaller (x
// below about -87, where exp(-x) overflows float as libm's expf does);
// +inf gives +inf, NaN gives NaN. An element's result
// depends only on its inputs and the target, never on n or where a vector
// ends (tails go through a zero-padded vector).
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {

struct SiluOps {
  // y[i] = silu(x[i]).
  void (*silu)(const float* x, float* y, int64_t n) = nullptr;
  // y[i] = silu(gate[i]) * up[i].
  void (*swiglu)(const float* gate, const float* up, float* y, int64_t n) = nullptr;
};

// The functions compiled for exactly `target`; on builds for other
// architectures than x86 only CpuTarget::Scalar has them (null otherwise).
SiluOps silu_ops(CpuTarget target);

}  // namespace synapse::cpu
