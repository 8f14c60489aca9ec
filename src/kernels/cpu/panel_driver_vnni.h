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
//   kTokens        tokens per micro-kernel,
//   pack(block, r, out)        repacks row r's block into lane r of out,
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

// Repacks blocks [b0, b0 + blocks) of the panel's rows into `packed`; rows
// past `rows` repeat the last one (their lanes are computed and dropped).
template <class Format>
void pack_panel_chunk(const uint8_t* w, uint64_t w_stride, int rows, int64_t b0, int64_t blocks, uint8_t* packed) {
  for (int r = 0; r < kPanelRows; ++r) {
    const uint8_t* row = w + std::min(r, rows - 1) * w_stride + b0 * Format::kEncodedBytes;
    for (int64_t b = 0; b < blocks; ++b)
      Format::pack(row + b * Format::kEncodedBytes, r, packed + b * Format::kPackedBytes);
  }
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
  for (int64_t b0 = 0; b0 < block_count; b0 += Format::kChunkBlocks) {
    const int64_t blocks = std::min<int64_t>(Format::kChunkBlocks, block_count - b0);
    pack_panel_chunk<Format>(w, w_stride, rows, b0, blocks, packed);
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
