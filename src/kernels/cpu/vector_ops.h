// Float vector primitives for the attention kernel, compiled once per
// CpuTarget (Google Highway, see hwy_targets.h). Any n >= 0 works; the
// elements past the last full vector go through the same vector operations
// on a zero-padded copy, so an element's result never depends on where the
// vector ends.
#pragma once

#include <cstdint>

#include "encoding/encoding.h"
#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {

// x, where a primitive takes one, is a row stored in the encoding the
// primitives were picked for: F32, F16 (converted with F16C / AVX-512 on
// the AVX targets) or Q8_0 (ggml's blocks of 32, n a multiple of 32),
// dequantized in registers as it is read.
struct VectorOps {
  // sum of a[i] * x[i]; the summation order depends only on n and the target.
  float (*dot)(const float* a, const void* x, int64_t n) = nullptr;
  // y[i] += a * x[i], fused (one rounding) on the AVX targets.
  void (*axpy)(float a, const void* x, float* y, int64_t n) = nullptr;
  // y[i] *= a.
  void (*scale)(float a, float* y, int64_t n) = nullptr;
};

// The primitives compiled for exactly `target`, reading x in `x_encoding`
// (F32, F16 or Q8_0; others get nulls); on builds for other architectures
// than x86 only CpuTarget::Scalar has them (null otherwise).
VectorOps vector_ops(CpuTarget target, Encoding x_encoding = Encoding::F32);

}  // namespace synapse::cpu
