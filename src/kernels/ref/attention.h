// Causal attention over a state view: queries of this step against the keys
// and values stored at positions 0..count-1.
#pragma once

#include <cstdint>

#include "kernels/ref/accumulation.h"

namespace synapse::ref {

// Rows of a state view stored in pages of page_rows rows each: row p is
// pages[p / page_rows][(p % page_rows) * width ...]. written, when set, holds
// a flag per row in the same paging; rows never written are masked (holes).
struct StateRows {
  const float* const* pages = nullptr;
  const uint8_t* const* written = nullptr;
  int64_t page_rows = 0;
  int64_t width = 0;
  int64_t count = 0;

  const float* row(int64_t p) const { return pages[p / page_rows] + (p % page_rows) * width; }
  bool has(int64_t p) const {
    if (!written) return true;
    const uint8_t* page = written[p / page_rows];
    return page && page[p % page_rows];
  }
};

struct AttentionShape {
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;
};

// out[t, head h] = sum_j softmax_j(q[t,h] . k[j, h/(heads/kv_heads)] * scale) v[j, ...]
// over the written positions j <= positions[t]. q and out are
// [tokens, heads * head_dim]; scores holds k.count floats. A query with no
// visible key gets zeros.
void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const StateRows& k,
                      const StateRows& v, const AttentionShape& shape, float* out, float* scores, Accumulation acc);

}  // namespace synapse::ref
