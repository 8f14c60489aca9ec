// Causal attention over a state view: queries of this step against the keys
// and values stored at positions 0..count-1.
#pragma once

#include <algorithm>
#include <cstdint>

#include "encoding/encoding.h"
#include "kernels/ref/accumulation.h"

namespace synapse::ref {

// Rows of a state view stored in pages of page_rows rows each, every row
// `width` elements in `encoding` (F32, F16 or Q8_0): row p starts at byte
// (p % page_rows) * row_bytes of pages[p / page_rows]. written, when set,
// holds a bit per row in the same paging (bit r % 64 of word r / 64); rows
// never written are masked (holes).
struct StateRows {
  const uint8_t* const* pages = nullptr;
  const uint64_t* const* written = nullptr;
  int64_t page_rows = 0;
  int64_t width = 0;
  int64_t count = 0;
  Encoding encoding = Encoding::F32;
  uint64_t row_bytes = 0;  // of one row of width elements in encoding

  const uint8_t* row(int64_t p) const {
    return pages[p / page_rows] + static_cast<uint64_t>(p % page_rows) * row_bytes;
  }
  // Where element `first` of row p starts; for Q8_0, first is a multiple of
  // the 32-element block.
  const uint8_t* at(int64_t p, int64_t first) const;
  bool has(int64_t p) const {
    if (!written) return true;
    const uint64_t* page = written[p / page_rows];
    const int64_t r = p % page_rows;
    return page && ((page[r / 64] >> (r % 64)) & 1u);
  }
  // f(p, row(p), has(p)) for p in [first, first + n) in order, finding each
  // page once (row(p) is null in a page never mapped).
  template <class F>
  void for_each_row(int64_t first, int64_t n, const F& f) const {
    for (int64_t p = first, end = first + n; p < end;) {
      const int64_t page = p / page_rows;
      const int64_t stop = std::min(end, (page + 1) * page_rows);
      const uint8_t* base = pages[page];
      const uint64_t* bits = written ? written[page] : nullptr;
      for (int64_t r = p % page_rows; p < stop; ++p, ++r) {
        const bool present = !written || (bits && ((bits[r / 64] >> (r % 64)) & 1u));
        f(p, base ? base + static_cast<uint64_t>(r) * row_bytes : nullptr, present);
      }
    }
  }
};

// A view of `count` F32 rows of `width` in pages of page_rows (no holes).
inline StateRows f32_rows(const uint8_t* const* pages, int64_t page_rows, int64_t width, int64_t count) {
  return StateRows{pages, nullptr, page_rows, width, count, Encoding::F32,
                   static_cast<uint64_t>(width) * sizeof(float)};
}

struct AttentionShape {
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;
};

// out[t, head h] = sum_j softmax_j(q[t,h] . k[j, h/(heads/kv_heads)] * scale) v[j, ...]
// over the written positions j <= positions[t]. q and out are
// [tokens, heads * head_dim]; scores holds k.count floats. A query with no
// visible key gets zeros. Encoded rows are dequantized as they are read;
// Q8_0 views need head_dim a multiple of 32.
void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const StateRows& k,
                      const StateRows& v, const AttentionShape& shape, float* out, float* scores, Accumulation acc);

}  // namespace synapse::ref
