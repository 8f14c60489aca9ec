// How the reference ops sum: in FP32 (like a plain scalar kernel) or in FP64
// (to tell rounding differences from bugs when comparing kernels).
#pragma once

#include <cstdint>

namespace synapse::ref {

enum class Accumulation : uint8_t { F32, F64 };

// out[t] = a[t * n .. t * n + n) . b for t < kRows, each sum in index
// order, so a row's bits do not depend on kRows. Several rows side by side
// only let their additions overlap: one sum alone is a chain of dependent
// additions, several times slower than the core's throughput (the
// reference's logits of a 200-token prompt over a 151936 x 2048 output
// matrix took most of a minute one row at a time).
template <class Acc, int kRows>
void dots_as(const float* a, const float* b, int64_t n, float (&out)[kRows]) {
  Acc sum[kRows] = {};
  for (int64_t i = 0; i < n; ++i) {
    const auto bi = static_cast<Acc>(b[i]);
    for (int t = 0; t < kRows; ++t) sum[t] += static_cast<Acc>(a[t * n + i]) * bi;
  }
  for (int t = 0; t < kRows; ++t) out[t] = static_cast<float>(sum[t]);
}

template <int kRows>
void dots(Accumulation acc, const float* a, const float* b, int64_t n, float (&out)[kRows]) {
  if (acc == Accumulation::F64) {
    dots_as<double>(a, b, n, out);
  } else {
    dots_as<float>(a, b, n, out);
  }
}

inline float dot(Accumulation acc, const float* a, const float* b, int64_t n) {
  float out[1];
  dots(acc, a, b, n, out);
  return out[0];
}

}  // namespace synapse::ref
