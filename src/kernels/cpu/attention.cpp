#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/vector_ops.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kKeyBlock = 64;

// The primitives reading keys and values in their encodings.
struct StateOps {
  VectorOps keys;
  VectorOps values;
};

// out = softmax(q . k_j * scale) weighted sum of v_j over visible j <= last;
// the kv head's elements start at byte k_offset / v_offset of a row.
void attend(const StateOps& ops, const float* q, int64_t last, const ref::StateRows& k, const ref::StateRows& v,
            uint64_t k_offset, uint64_t v_offset, const ref::AttentionShape& shape, float* out) {
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
      scores[i] = k.has(j) ? ops.keys.dot(q, k.row(j) + k_offset, shape.head_dim) * shape.scale
                           : -std::numeric_limits<float>::infinity();
      block_max = std::max(block_max, scores[i]);
    }
    if (block_max == -std::numeric_limits<float>::infinity()) continue;  // all holes
    if (block_max > max_score) {
      // Earlier terms were weighted against the old max: rescale them.
      const float rescale = std::exp(max_score - block_max);
      ops.values.scale(rescale, acc, shape.head_dim);
      total *= rescale;
      max_score = block_max;
    }
    for (int64_t i = 0; i < count; ++i) {
      if (scores[i] == -std::numeric_limits<float>::infinity()) continue;
      const float weight = std::exp(scores[i] - max_score);
      total += weight;
      ops.values.axpy(weight, v.row(j0 + i) + v_offset, acc, shape.head_dim);
    }
  }
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  for (int64_t d = 0; d < shape.head_dim; ++d) out[d] = acc[d] * inverse;
}

}  // namespace

void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const ref::StateRows& k,
                      const ref::StateRows& v, const ref::AttentionShape& shape, float* out, CpuTarget target,
                      ThreadPool& pool) {
  const StateOps ops{vector_ops(target, k.encoding), vector_ops(target, v.encoding)};
  // Bytes of one head in a row (throws here, not in a worker, for a head
  // that is not whole blocks).
  const uint64_t k_head_bytes = row_bytes(k.encoding, static_cast<uint64_t>(shape.head_dim));
  const uint64_t v_head_bytes = row_bytes(v.encoding, static_cast<uint64_t>(shape.head_dim));
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
      const auto kv_head = static_cast<uint64_t>(h / group);
      attend(ops, q + t * width + h * shape.head_dim, last, k, v, kv_head * k_head_bytes, kv_head * v_head_bytes,
             shape, out + t * width + h * shape.head_dim);
    }
  });
}

}  // namespace synapse::cpu
