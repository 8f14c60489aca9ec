#include "kernels/ref/routing.h"

#include <algorithm>

namespace synapse::ref {

void top_k_route(const float* scores, int64_t tokens, int64_t experts, const ir::TopKRoute& route, float* gates,
                 std::span<uint32_t> scratch) {
  uint32_t* load = scratch.data();              // tokens each expert took so far
  uint32_t* picked = scratch.data() + experts;  // token + 1 that last picked it
  std::fill(load, load + experts, 0u);
  std::fill(picked, picked + experts, 0u);
  for (int64_t t = 0; t < tokens; ++t) {
    const float* s = scores + t * experts;
    float* g = gates + t * experts;
    std::fill(g, g + experts, 0.0f);
    const auto stamp = static_cast<uint32_t>(t + 1);
    float kept = 0.0f;
    for (uint32_t choice = 0; choice < route.k; ++choice) {
      int64_t best = -1;
      for (int64_t e = 0; e < experts; ++e)  // strict '>' keeps the lowest index on ties
        if (picked[e] != stamp && (best < 0 || s[e] > s[best])) best = e;
      picked[best] = stamp;
      if (route.capacity && load[best] >= *route.capacity) continue;
      ++load[best];
      g[best] = s[best];
      kept += s[best];
    }
    if (route.normalize_top_k && kept != 0.0f)
      for (int64_t e = 0; e < experts; ++e) g[e] /= kept;
  }
}

void add_gated(const float* gates, int64_t gate_columns, int64_t column, const float* x, int64_t tokens,
               int64_t width, float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float gate = gates[t * gate_columns + column];
    if (gate == 0.0f) continue;  // an unselected expert contributes nothing, even NaN
    for (int64_t i = 0; i < width; ++i) y[t * width + i] += gate * x[t * width + i];
  }
}

}  // namespace synapse::ref
