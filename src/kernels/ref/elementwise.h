// Element-wise ops and the row softmax, on float buffers of n elements.
#pragma once

#include <cstdint>

#include "ir/attributes.h"
#include "kernels/ref/accumulation.h"

namespace synapse::ref {

void add(const float* a, const float* b, float* y, int64_t n);
void mul(const float* a, const float* b, float* y, int64_t n);
void silu(const float* x, float* y, int64_t n);  // x * sigmoid(x)
void gelu(const float* x, float* y, int64_t n, ir::GeluApproximation approximation);
void swiglu(const float* gate, const float* up, float* y, int64_t n);  // silu(gate) * up

// Softmax of each row of [rows, width], max-subtracted.
void softmax(const float* x, int64_t rows, int64_t width, float* y, Accumulation acc);

}  // namespace synapse::ref
