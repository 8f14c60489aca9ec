#include "kernels/ref/norm.h"

#include <cmath>

namespace synapse::ref {
namespace {

template <class Acc>
void rms_norm_as(const float* x, int64_t rows, int64_t width, const float* weight, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    Acc sum = 0;
    for (int64_t i = 0; i < width; ++i) sum += static_cast<Acc>(xr[i]) * static_cast<Acc>(xr[i]);
    const float mean = static_cast<float>(sum / static_cast<Acc>(width));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < width; ++i) y[r * width + i] = xr[i] * scale * weight[i];
  }
}

template <class Acc>
void layer_norm_as(const float* x, int64_t rows, int64_t width, const float* weight, const float* bias, float eps,
                   float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    Acc sum = 0;
    for (int64_t i = 0; i < width; ++i) sum += xr[i];
    const Acc mean = sum / static_cast<Acc>(width);
    Acc squares = 0;
    for (int64_t i = 0; i < width; ++i) squares += (xr[i] - mean) * (xr[i] - mean);
    const float variance = static_cast<float>(squares / static_cast<Acc>(width));
    const float scale = 1.0f / std::sqrt(variance + eps);
    for (int64_t i = 0; i < width; ++i)
      y[r * width + i] = static_cast<float>(xr[i] - mean) * scale * weight[i] + (bias ? bias[i] : 0.0f);
  }
}

}  // namespace

void rms_norm(const float* x, int64_t rows, int64_t width, const float* weight, float eps, float* y,
              Accumulation acc) {
  if (acc == Accumulation::F64)
    rms_norm_as<double>(x, rows, width, weight, eps, y);
  else
    rms_norm_as<float>(x, rows, width, weight, eps, y);
}

void layer_norm(const float* x, int64_t rows, int64_t width, const float* weight, const float* bias, float eps,
                float* y, Accumulation acc) {
  if (acc == Accumulation::F64)
    layer_norm_as<double>(x, rows, width, weight, bias, eps, y);
  else
    layer_norm_as<float>(x, rows, width, weight, bias, eps, y);
}

}  // namespace synapse::ref
