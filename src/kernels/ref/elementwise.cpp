#include "kernels/ref/elementwise.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace synapse::ref {
namespace {

float silu_of(float x) { return x / (1.0f + std::exp(-x)); }

template <class Acc>
void softmax_as(const float* x, int64_t rows, int64_t width, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    float* yr = y + r * width;
    const float max_x = *std::max_element(xr, xr + width);
    Acc total = 0;
    for (int64_t i = 0; i < width; ++i) {
      yr[i] = std::exp(xr[i] - max_x);
      total += yr[i];
    }
    for (int64_t i = 0; i < width; ++i) yr[i] = static_cast<float>(yr[i] / total);
  }
}

}  // namespace

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void mul(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = silu_of(x[i]);
}

void gelu(const float* x, float* y, int64_t n, ir::GeluApproximation approximation) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = approximation == ir::GeluApproximation::Erf
               ? 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>))
               : 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
  }
}

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = silu_of(gate[i]) * up[i];
}

void softmax(const float* x, int64_t rows, int64_t width, float* y, Accumulation acc) {
  if (acc == Accumulation::F64)
    softmax_as<double>(x, rows, width, y);
  else
    softmax_as<float>(x, rows, width, y);
}

}  // namespace synapse::ref
