// The logistic function, elementwise.
#pragma once

#include <cstdint>

namespace synapse::ref {

void sigmoid(const float* x, float* y, int64_t n);  // 1 / (1 + exp(-x))

}  // namespace synapse::ref
