#include "kernels/ref/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace synapse::ref {
namespace {

template <class Acc>
void attend(const float* q, int32_t position, const StateRows& k, const StateRows& v, int64_t kv_offset,
            const AttentionShape& shape, float* out, float* scores) {
  const int64_t last = std::min<int64_t>(position, k.count - 1);
  float max_score = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j <= last; ++j) {
    if (!k.has(j)) continue;
    scores[j] = static_cast<float>(dot_as<Acc>(q, k.row(j) + kv_offset, shape.head_dim)) * shape.scale;
    max_score = std::max(max_score, scores[j]);
  }
  Acc total = 0;
  for (int64_t j = 0; j <= last; ++j) {
    if (!k.has(j)) continue;
    scores[j] = std::exp(scores[j] - max_score);
    total += scores[j];
  }
  for (int64_t d = 0; d < shape.head_dim; ++d) {
    Acc sum = 0;
    for (int64_t j = 0; j <= last; ++j)
      if (k.has(j)) sum += static_cast<Acc>(scores[j]) * v.row(j)[kv_offset + d];
    out[d] = total > 0 ? static_cast<float>(sum / total) : 0.0f;
  }
}

template <class Acc>
void attention_as(const float* q, const int32_t* positions, int64_t tokens, const StateRows& k, const StateRows& v,
                  const AttentionShape& shape, float* out, float* scores) {
  const int64_t width = shape.heads * shape.head_dim;
  const int64_t group = shape.heads / shape.kv_heads;  // query heads per kv head
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const int64_t offset = h * shape.head_dim;
      attend<Acc>(q + t * width + offset, positions[t], k, v, (h / group) * shape.head_dim, shape,
                  out + t * width + offset, scores);
    }
}

}  // namespace

void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const StateRows& k,
                      const StateRows& v, const AttentionShape& shape, float* out, float* scores, Accumulation acc) {
  if (acc == Accumulation::F64)
    attention_as<double>(q, positions, tokens, k, v, shape, out, scores);
  else
    attention_as<float>(q, positions, tokens, k, v, shape, out, scores);
}

}  // namespace synapse::ref
