// Pieces shared by the SIMD tiles of the legacy encodings
// (dot_legacy_avx2.cpp, dot_legacy_vnni.cpp): both walk four weight rows
// at once and read the rows' fp16 block scales together.
//
// Internal linkage only, for the reason given in simd_helpers.h: each SIMD
// translation unit gets its own copy compiled with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/dot_legacy_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::legacy {
namespace {

constexpr int kRows = 4;
constexpr int kMaxTokens = 4;
constexpr int64_t kBlockElems = 32;
// ActQ8Block: float d, int32 sum, int8 qs[32].
constexpr uint64_t kActBlockBytes = 40;
constexpr uint64_t kActSumOffset = 4;
constexpr uint64_t kActQsOffset = 8;
// Weight blocks start with their fp16 scale; the values follow.
constexpr uint64_t kWeightQsOffset = 2;

// The tile's four row pointers; rows past `rows` repeat the last row (their
// lanes are computed and dropped) so the row loop is always four wide.
inline void select_rows(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* (&row)[kRows]) {
  for (int r = 0; r < kRows; ++r) row[r] = w + (r < rows ? r : rows - 1) * w_stride;
}

// The fp16 scales of the four rows' blocks at `offset`, packed in general
// registers (cheap ports) rather than inserted lane by lane (the shuffle
// port, which the sums already keep busy).
inline uint64_t row_scale_bits(const uint8_t* const (&row)[kRows], uint64_t offset) {
  return uint64_t{load_u16(row[0] + offset)} | uint64_t{load_u16(row[1] + offset)} << 16 |
         uint64_t{load_u16(row[2] + offset)} << 32 | uint64_t{load_u16(row[3] + offset)} << 48;
}

// The four rows' block scales at `offset` as floats.
inline __m128 load_row_scales(const uint8_t* const (&row)[kRows], uint64_t offset) {
  return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<int64_t>(row_scale_bits(row, offset))));
}

// A matrix-vector product walks rows in tiles of four; each row is a short
// stream the hardware prefetcher would only catch up with late, so every
// tile starts fetching the bytes at the same offset four rows further down
// (a prefetch never faults, even past the end of the matrix).
inline void prefetch_next_tile(const uint8_t* p, uint64_t w_stride) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kRows * w_stride), _MM_HINT_T0);
}

// Stores the tile's first `rows` lanes of acc (rows 0-3 of one token) at y.
inline void store_rows(__m128 acc, int rows, float* y) {
  float out[kRows];
  _mm_storeu_ps(out, acc);
  std::memcpy(y, out, rows * sizeof(float));
}

// A DotTile from Tile::run<kTokens>, the tile for exactly kTokens tokens.
// Shapes beyond the tile leave y alone, as the scalar tile does.
template <class Tile>
void tile_for_tokens(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
                     int64_t n, float* y, int64_t y_stride) {
  if (rows < 1 || rows > kRows) return;
  switch (tokens) {
    case 1: return Tile::template run<1>(w, w_stride, rows, x, x_stride, n, y, y_stride);
    case 2: return Tile::template run<2>(w, w_stride, rows, x, x_stride, n, y, y_stride);
    case 3: return Tile::template run<3>(w, w_stride, rows, x, x_stride, n, y, y_stride);
    case kMaxTokens: return Tile::template run<kMaxTokens>(w, w_stride, rows, x, x_stride, n, y, y_stride);
    default: return;
  }
}

}  // namespace
}  // namespace synapse::cpu::legacy
