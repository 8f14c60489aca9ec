#include "kernels/ref/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace synapse::ref {

const uint8_t* StateRows::at(int64_t p, int64_t first) const {
  return row(p) + synapse::row_bytes(encoding, static_cast<uint64_t>(first));
}

namespace {

// Rows are read in pieces of one Q8_0 block, dequantized on the stack.
constexpr int64_t kPiece = 32;

template <class Acc>
void attend(const float* q, int32_t position, const StateRows& k, const StateRows& v, int64_t kv_offset,
            const AttentionShape& shape, float* out, float* scores) {
  const int64_t last = std::min<int64_t>(position, k.count - 1);
  float piece[kPiece];
  float max_score = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j <= last; ++j) {
    if (!k.has(j)) continue;
    Acc dot = 0;  // summed in element order, as dots_as does
    for (int64_t d0 = 0; d0 < shape.head_dim; d0 += kPiece) {
      const int64_t n = std::min(kPiece, shape.head_dim - d0);
      dequantize_row(k.encoding, k.at(j, kv_offset + d0), piece, n);
      for (int64_t i = 0; i < n; ++i) dot += static_cast<Acc>(q[d0 + i]) * static_cast<Acc>(piece[i]);
    }
    scores[j] = static_cast<float>(dot) * shape.scale;
    max_score = std::max(max_score, scores[j]);
  }
  Acc total = 0;
  for (int64_t j = 0; j <= last; ++j) {
    if (!k.has(j)) continue;
    scores[j] = std::exp(scores[j] - max_score);
    total += scores[j];
  }
  for (int64_t d0 = 0; d0 < shape.head_dim; d0 += kPiece) {
    const int64_t n = std::min(kPiece, shape.head_dim - d0);
    Acc sums[kPiece] = {};
    for (int64_t j = 0; j <= last; ++j) {
      if (!k.has(j)) continue;
      dequantize_row(v.encoding, v.at(j, kv_offset + d0), piece, n);
      for (int64_t i = 0; i < n; ++i) sums[i] += static_cast<Acc>(scores[j]) * piece[i];
    }
    for (int64_t i = 0; i < n; ++i) out[d0 + i] = total > 0 ? static_cast<float>(sums[i] / total) : 0.0f;
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
