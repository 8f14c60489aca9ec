#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/vector_ops.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kKeyBlock = 64;

// out = softmax(q . k_j * scale) weighted sum of v_j over visible j <= last.
void attend(const VectorOps& ops, const float* q, int64_t last, const ref::StateRows& k, const ref::StateRows& v,
            int64_t offset, const ref::AttentionShape& shape, float* out) {
  float acc[kMaxAttentionHeadDim];
  float scores[kKeyBlock];
  std::fill(acc, acc + shape.head_dim, 0.0f);
  float max_score = -std::numeric_limits<float>::infinity();
  float total = 0.0f;
  for (int64_t j0 = 0; j0 <= last; j0 += kKeyBlock) {
    const int64_t count = std::min(kKeyBlock, last + 1 - j0);
    float block_max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = j0 + i;
      scores[i] = k.has(j) ? ops.dot(q, k.row(j) + offset, shape.head_dim) * shape.scale
                           : -std::numeric_limits<float>::infinity();
      block_max = std::max(block_max, scores[i]);
    }
    if (block_max == -std::numeric_limits<float>::infinity()) continue;  // all holes
    if (block_max > max_score) {
      // Earlier terms were weighted against the old max: rescale them.
      const float rescale = std::exp(max_score - block_max);
      ops.scale(rescale, acc, shape.head_dim);
      total *= rescale;
      max_score = block_max;
    }
    for (int64_t i = 0; i < count; ++i) {
      if (scores[i] == -std::numeric_limits<float>::infinity()) continue;
      const float weight = std::exp(scores[i] - max_score);
      total += weight;
      ops.axpy(weight, v.row(j0 + i) + offset, acc, shape.head_dim);
    }
  }
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  for (int64_t d = 0; d < shape.head_dim; ++d) out[d] = acc[d] * inverse;
}

}  // namespace

void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const ref::StateRows& k,
                      const ref::StateRows& v, const ref::AttentionShape& shape, float* out, CpuTarget target,
                      ThreadPool& pool) {
  const VectorOps ops = vector_ops(target);
  const int64_t width = shape.heads * shape.head_dim;
  const int64_t group = shape.heads / shape.kv_heads;
  const int64_t queries = tokens * shape.heads;
  // Strided shares: later tokens see more keys, so contiguous shares of a
  // prefill would leave the last worker with most of the work.
  pool.run([&](int worker, int workers) {
    for (int64_t i = worker; i < queries; i += workers) {
      const int64_t t = i / shape.heads;
      const int64_t h = i % shape.heads;
      const int64_t last = std::min<int64_t>(positions[t], k.count - 1);
      attend(ops, q + t * width + h * shape.head_dim, last, k, v, (h / group) * shape.head_dim, shape,
             out + t * width + h * shape.head_dim);
    }
  });
}

}  // namespace synapse::cpu
