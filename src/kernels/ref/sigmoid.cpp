#include "kernels/ref/sigmoid.h"

#include <cmath>

namespace synapse::ref {

void sigmoid(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

}  // namespace synapse::ref
