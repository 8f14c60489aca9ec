// How the reference ops sum: in FP32 (like a plain scalar kernel) or in FP64
// (to tell rounding differences from bugs when comparing kernels).
#pragma once

#include <cstdint>

namespace synapse::ref {

enum class Accumulation : uint8_t { F32, F64 };

template <class Acc>
Acc dot_as(const float* a, const float* b, int64_t n) {
  Acc sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<Acc>(a[i]) * static_cast<Acc>(b[i]);
  return sum;
}

inline float dot(Accumulation acc, const float* a, const float* b, int64_t n) {
  return acc == Accumulation::F64 ? static_cast<float>(dot_as<double>(a, b, n)) : dot_as<float>(a, b, n);
}

}  // namespace synapse::ref
