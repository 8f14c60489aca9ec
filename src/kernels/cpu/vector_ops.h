// Float vector primitives for the attention kernel, compiled once per
// CpuTarget (Google Highway, see hwy_targets.h). Any n >= 0 works; the
// elements past the last full vector go through the same vector operations
// on a zero-padded copy, so an element's result never depends on where the
// vector ends.
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {

struct VectorOps {
  // sum of a[i] * b[i]; the summation order depends only on n and the target.
  float (*dot)(const float* a, const float* b, int64_t n) = nullptr;
  // y[i] += a * x[i], fused (one rounding) on the AVX targets.
  void (*axpy)(float a, const float* x, float* y, int64_t n) = nullptr;
  // y[i] *= a.
  void (*scale)(float a, float* y, int64_t n) = nullptr;
};

// The primitives compiled for exactly `target`; on builds for other
// architectures than x86 only CpuTarget::Scalar has them (null otherwise).
VectorOps vector_ops(CpuTarget target);

}  // namespace synapse::cpu
