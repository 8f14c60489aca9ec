// Normalizations over the last dim of row-major [rows, width] buffers.
#pragma once

#include <cstdint>

#include "kernels/ref/accumulation.h"

namespace synapse::ref {

// y = x / sqrt(mean(x^2) + eps) * weight (llama.cpp rms_norm then mul).
void rms_norm(const float* x, int64_t rows, int64_t width, const float* weight, float eps, float* y,
              Accumulation acc);

// y = (x - mean) / sqrt(var + eps) * weight (+ bias); var is the biased one.
void layer_norm(const float* x, int64_t rows, int64_t width, const float* weight, const float* bias, float eps,
                float* y, Accumulation acc);

}  // namespace synapse::ref
