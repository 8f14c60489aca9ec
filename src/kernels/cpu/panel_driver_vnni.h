// The driver shared by the AVX-512 VNNI panels (dot_legacy_panel_vnni.cpp,
// dot_kquant_panel_vnni.cpp): both repack up to kPanelRows weight rows a
// chunk of blocks at a time so that one 512-bit register holds 16 rows in
// its lanes, then stream every token past the chunk in micro-kernels of a
// fixed token count, with a smaller one for the tokens left over.
//
// An encoding's panel supplies a Format with
//   kEncodedBytes  bytes of one block in a weight row,
//   kBlockElems    elements of one block,
//   kPackedBytes   bytes of one block once repacked for kPanelRows rows,
//   kActBytes      bytes of one activation block,
//   kChunkBlocks   blocks repacked at a time (the chunk stays in L1),
//   kFewTokensChunkBlocks  the chunk below kPanelFewTokens tokens (the
//                  products then wait on memory, so the next panel is
//                  prefetched, and the chunk must leave L1 room for it),
//   kTokens        tokens per micro-kernel,
//   pack_lanes(row, offset, h, out)  repacks the blocks at offset of the
//                  16 rows `row` into the lanes of register half h of out
//                  (transpose_row_groups below does the 4-byte groups),
//   multiply<Count>(packed, blocks, x, x_stride, first, masks, y, y_stride)
//                  Count tokens against the packed chunk (continuing y's
//                  accumulators unless `first`).
//
// Internal linkage only, for the reason given in simd_helpers.h.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu {
namespace {

constexpr int kPanelLanes = 16;                          // rows per 512-bit register
constexpr int kPanelHalves = kPanelRows / kPanelLanes;  // registers per row group
// Below this many tokens a panel's products wait on its weight rows: the
// driver prefetches the next panel's rows, in a format's smaller chunks.
constexpr int kPanelFewTokens = 32;

// Lane masks of the panel's rows in each half.
struct PanelRowMasks {
  __mmask16 half[kPanelHalves];
};

inline PanelRowMasks panel_row_masks(int rows) {
  PanelRowMasks masks;
  for (int h = 0; h < kPanelHalves; ++h) {
    // Not std::clamp: a std template instantiated here may be emitted weak (see simd_helpers.h).
    const int left = rows - h * kPanelLanes;
    const int lanes = left < 0 ? 0 : left > kPanelLanes ? kPanelLanes : left;
    masks.half[h] = static_cast<__mmask16>((1u << lanes) - 1);
  }
  return masks;
}

// 16 lanes of 4 bytes into `part` (a packed part of kPanelRows lanes),
// those of register half h.
inline void store_lanes(uint8_t* part, int h, __m512i lanes) {
  _mm512_store_si512(reinterpret_cast<__m512i*>(part + h * kPanelLanes * sizeof(uint32_t)), lanes);
}

// 32 bytes of each of 16 rows as 8 four-byte groups, transposed: group g of
// rows[r] lands in lane r of out[g]. Rows r and r + 8 share a register (one
// per 256-bit half), an 8 x 8 transpose of the groups runs in each half,
// and a last permute puts the rows in lane order.
inline void transpose_row_groups(const __m256i (&rows)[kPanelLanes], __m512i (&out)[8]) {
  __m512i z[8];
  for (int i = 0; i < 8; ++i) z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(rows[i]), rows[i + 8], 1);
  __m512i t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_epi32(z[i], z[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(z[i], z[i + 1]);
  }
  // s[q] for q < 4 holds rows 0-3 and 8-11, q >= 4 rows 4-7 and 12-15;
  // 128-bit lane k of s[q] has group q % 4 + 4 * (k % 2).
  __m512i s[8];
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    s[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    s[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    s[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  const __m512i low = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i high = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  for (int g = 0; g < 4; ++g) {
    out[g] = _mm512_permutex2var_epi64(s[g], low, s[g + 4]);
    out[g + 4] = _mm512_permutex2var_epi64(s[g], high, s[g + 4]);
  }
}

// The 32 bytes at `offset` of 16 rows, transposed as transpose_row_groups.
inline void transpose_row_groups(const uint8_t* const* row, uint64_t offset, __m512i (&out)[8]) {
  __m256i rows[kPanelLanes];
  for (int r = 0; r < kPanelLanes; ++r) rows[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[r] + offset));
  transpose_row_groups(rows, out);
}

// Repacks blocks [b0, b0 + blocks) of the panel's rows into `packed`; rows
// past `rows` repeat the last one (their lanes are computed and dropped).
// A Format repacks a block of 16 rows (a register's lanes) at a time.
template <class Format>
void pack_panel_chunk(const uint8_t* w, uint64_t w_stride, int rows, int64_t b0, int64_t blocks, bool prefetch_next,
                      uint8_t* packed) {
  // The same bytes of the next panel's rows (matmul walks panels down the
  // matrix): 32 short streams the hardware prefetcher would not follow,
  // and with few tokens the products would wait on them. A prefetch past
  // the matrix's end never faults.
  if (prefetch_next) {
    const uint8_t* next = w + kPanelRows * w_stride + b0 * Format::kEncodedBytes;
    for (int r = 0; r < kPanelRows; ++r)
      for (uint64_t at = 0; at < blocks * Format::kEncodedBytes; at += 64)
        _mm_prefetch(reinterpret_cast<const char*>(next + r * w_stride + at), _MM_HINT_T2);
  }
  const uint8_t* row[kPanelRows];
  for (int r = 0; r < kPanelRows; ++r) row[r] = w + std::min(r, rows - 1) * w_stride + b0 * Format::kEncodedBytes;
  for (int64_t b = 0; b < blocks; ++b)
    for (int h = 0; h < kPanelHalves; ++h)
      Format::pack_lanes(row + h * kPanelLanes, b * Format::kEncodedBytes, h, packed + b * Format::kPackedBytes);
}

// The `count` (< kTokens) tokens left after the full micro-kernels, through
// the micro-kernel of exactly that count.
template <class Format, int... Counts>
void multiply_rest(int count, std::integer_sequence<int, Counts...>, const uint8_t* packed, int64_t blocks,
                   const uint8_t* x, uint64_t x_stride, bool first, const PanelRowMasks& masks, float* y,
                   int64_t y_stride) {
  ((count == Counts + 1 ? Format::template multiply<Counts + 1>(packed, blocks, x, x_stride, first, masks, y, y_stride)
                        : void()),
   ...);
}

// Up to kPanelRows rows against any number of tokens (a DotTile): a chunk of
// blocks is repacked once and every token streams past it.
template <class Format>
void run_panel(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
               int64_t n, float* y, int64_t y_stride) {
  if (rows < 1 || rows > kPanelRows || tokens < 1) return;
  alignas(64) uint8_t packed[Format::kChunkBlocks * Format::kPackedBytes];
  const PanelRowMasks masks = panel_row_masks(rows);
  const int64_t block_count = n / Format::kBlockElems;
  const bool few = tokens < kPanelFewTokens;
  const int64_t chunk = few ? Format::kFewTokensChunkBlocks : Format::kChunkBlocks;
  for (int64_t b0 = 0; b0 < block_count; b0 += chunk) {
    const int64_t blocks = std::min<int64_t>(chunk, block_count - b0);
    pack_panel_chunk<Format>(w, w_stride, rows, b0, blocks, few, packed);
    const bool first = b0 == 0;
    const uint8_t* chunk_x = x + b0 * Format::kActBytes;
    int t = 0;
    for (; t + Format::kTokens <= tokens; t += Format::kTokens)
      Format::template multiply<Format::kTokens>(packed, blocks, chunk_x + t * x_stride, x_stride, first, masks,
                                                 y + t * y_stride, y_stride);
    multiply_rest<Format>(tokens - t, std::make_integer_sequence<int, Format::kTokens - 1>(), packed, blocks,
                          chunk_x + t * x_stride, x_stride, first, masks, y + t * y_stride, y_stride);
  }
}

}  // namespace
}  // namespace synapse::cpu
