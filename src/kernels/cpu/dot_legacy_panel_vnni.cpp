// AVX-512 VNNI panels: Q8_0 and Q4_0 weights against many tokens' Q8
// activations (prefill), a register-blocked GEMM micro-kernel.
//
// A tile (dot_legacy_vnni.cpp) sums each pair's block lanes horizontally,
// which costs more shuffles than products. Here the lanes of a register are
// 16 weight rows instead: the panel's rows are first repacked so that one
// 512-bit load gives the same 4-byte group of a block for 16 rows, and a
// token's matching 4 activation bytes are broadcast to every lane. Eight
// vpdpbusd then leave each lane holding its row's exact block sum for that
// token, with no horizontal step. A micro-kernel keeps 2 x 16 rows by 6
// tokens of block sums and float accumulators in registers.
//
// Batch invariance: every (row, token) pair gets the same operations as in
// the tiles: the exact int32 block sum, then acc = fma(dw * dx, sum, acc)
// block after block, starting from 0. The int sum is exact whichever way it
// is formed, so a pair's float equals the tiles' bit for bit (the tests
// check it), whatever the panel's rows, tokens or grouping.
//
// The repacked weights are values + 128 as unsigned bytes (Q8_0 values w
// as w ^ 0x80, Q4_0 nibbles q as q + 120 = (q - 8) + 128), so both
// encodings share one micro-kernel and one correction: 128 times the
// token's block sum comes off each raw sum.
//
// Only intrinsics and helpers with internal linkage here: see dot_kernel.h.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/dot_legacy_simd.h"
#include "kernels/cpu/dot_legacy_tiles.h"
#include "kernels/cpu/panel_driver_vnni.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::legacy {
namespace {

constexpr int kGroups = 8;  // 4-byte groups per 32-element block
// One repacked block of the panel's rows: group g of every row (as uint32),
// then every row's scale (as float).
constexpr uint64_t kGroupBytes = kPanelRows * sizeof(uint32_t);
constexpr uint64_t kScalesOffset = kGroups * kGroupBytes;
constexpr uint64_t kPackedBlockBytes = kScalesOffset + kPanelRows * sizeof(float);
// Blocks repacked at a time: the packed chunk stays in L1 while every
// token streams past it. With few tokens the products wait on memory, and
// a chunk of 4 (bench/kernels prefill, dram: 66 against 48 GMAC/s at 8
// tokens with 16) leaves L1 room for the next panel's prefetched rows.
constexpr int64_t kPanelChunkBlocks = 16;
constexpr int64_t kPanelFewTokensChunkBlocks = 4;
// Tokens per micro-kernel: 2 x kMicroTokens block sums and as many float
// accumulators, plus the two weight registers, fit the 32 registers.
constexpr int kMicroTokens = 6;

// Group g of 16 rows' blocks, one row per lane, as the panel stores it.
using LaneGroups = __m512i[kGroups];

// The fp16 scales of 16 rows' blocks at `offset`, as floats in row order.
__m512 lane_scales(const uint8_t* const* row, uint64_t offset) {
  alignas(32) uint16_t bits[kPanelLanes];
  for (int r = 0; r < kPanelLanes; ++r) bits[r] = load_u16(row[r] + offset);
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(bits)));
}

// Q8_0: value w as the byte w + 128.
struct Q8_0Groups {
  static constexpr uint64_t kBlockBytes = 34;
  // The 32 value bytes of 16 rows, group g of row r in lane r of out[g].
  static void lanes(const uint8_t* const* row, uint64_t offset, LaneGroups& out) {
    transpose_row_groups(row, offset + kWeightQsOffset, out);
    const __m512i offset128 = _mm512_set1_epi8(static_cast<char>(0x80));
    for (__m512i& group : out) group = _mm512_xor_si512(group, offset128);
  }
};

// Q4_0: elements 0-15 are the low nibbles of the 16 bytes, 16-31 the high
// ones; value q - 8 as the byte q + 120.
struct Q4_0Groups {
  static constexpr uint64_t kBlockBytes = 18;
  // The 16 packed bytes of 16 rows: rows i, i + 4, i + 8, i + 12 share a
  // register (one per 128-bit lane), a 4 x 4 transpose of 4-byte words runs
  // in each lane, and the nibbles of word k give groups k and k + 4 (no
  // byte carries in adding 120: 15 + 120 < 256).
  static void lanes(const uint8_t* const* row, uint64_t offset, LaneGroups& out) {
    const auto packed = [&](int r) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r] + offset + kWeightQsOffset));
    };
    __m512i z[4];
    for (int i = 0; i < 4; ++i) {
      z[i] = _mm512_castsi128_si512(packed(i));
      z[i] = _mm512_inserti32x4(z[i], packed(i + 4), 1);
      z[i] = _mm512_inserti32x4(z[i], packed(i + 8), 2);
      z[i] = _mm512_inserti32x4(z[i], packed(i + 12), 3);
    }
    const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    const __m512i words[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                              _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
    const __m512i low4 = _mm512_set1_epi8(0x0f), offset120 = _mm512_set1_epi8(0x78);
    for (int k = 0; k < 4; ++k) {
      out[k] = _mm512_add_epi8(_mm512_and_si512(words[k], low4), offset120);
      out[k + 4] = _mm512_add_epi8(_mm512_and_si512(_mm512_srli_epi16(words[k], 4), low4), offset120);
    }
  }
};

// Count tokens (x at their rows' first block of the chunk) against the
// packed chunk: y[t * y_stride + r] continues the pairs' accumulators
// (starts them at 0 when `first`). Forced inline into the dispatch on Count,
// so that every array here lives in registers.
template <int Count>
[[gnu::always_inline]] inline void multiply_tokens(const uint8_t* packed, int64_t blocks, const uint8_t* x,
                                                   uint64_t x_stride, bool first, const PanelRowMasks& masks, float* y,
                                                   int64_t y_stride) {
  const uint8_t* token[Count];
  for (int t = 0; t < Count; ++t) token[t] = x + t * x_stride;
  __m512 acc[Count][kPanelHalves];
  for (int t = 0; t < Count; ++t)
    for (int h = 0; h < kPanelHalves; ++h)
      acc[t][h] =
          first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(masks.half[h], y + t * y_stride + h * kPanelLanes);

  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = packed + b * kPackedBlockBytes;
    const uint64_t act = b * kActBlockBytes;
    __m512i sum[Count][kPanelHalves];
    for (int t = 0; t < Count; ++t) {
      // The weights' +128 offset times the token's block sum, subtracted
      // up front.
      const __m512i offset = _mm512_set1_epi32(-(load_i32(token[t] + act + kActSumOffset) * 128));
      for (int h = 0; h < kPanelHalves; ++h) sum[t][h] = offset;
    }
    for (int g = 0; g < kGroups; ++g) {
      __m512i w[kPanelHalves];
      for (int h = 0; h < kPanelHalves; ++h)
        w[h] = _mm512_load_si512(block + g * kGroupBytes + h * kPanelLanes * sizeof(uint32_t));
      for (int t = 0; t < Count; ++t) {
        const __m512i xg = _mm512_set1_epi32(load_i32(token[t] + act + kActQsOffset + 4 * g));
        for (int h = 0; h < kPanelHalves; ++h) sum[t][h] = _mm512_dpbusd_epi32(sum[t][h], w[h], xg);
      }
    }
    for (int t = 0; t < Count; ++t) {
      const __m512 dx = _mm512_set1_ps(load_f32(token[t] + act));
      for (int h = 0; h < kPanelHalves; ++h) {
        const __m512 dw = _mm512_load_ps(block + kScalesOffset + h * kPanelLanes * sizeof(float));
        acc[t][h] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(sum[t][h]), acc[t][h]);
      }
    }
  }

  for (int t = 0; t < Count; ++t)
    for (int h = 0; h < kPanelHalves; ++h)
      _mm512_mask_storeu_ps(y + t * y_stride + h * kPanelLanes, masks.half[h], acc[t][h]);
}

// The panel format of an encoding whose groups come from Groups (both
// share the micro-kernel above).
template <class Groups>
struct LegacyPanel {
  static constexpr uint64_t kEncodedBytes = Groups::kBlockBytes;
  static constexpr int64_t kBlockElems = legacy::kBlockElems;
  static constexpr uint64_t kPackedBytes = kPackedBlockBytes;
  static constexpr uint64_t kActBytes = kActBlockBytes;
  static constexpr int64_t kChunkBlocks = kPanelChunkBlocks;
  static constexpr int64_t kFewTokensChunkBlocks = kPanelFewTokensChunkBlocks;
  static constexpr int kTokens = kMicroTokens;

  // Blocks at `offset` of the 16 rows `row` into lanes of register half h.
  static void pack_lanes(const uint8_t* const* row, uint64_t offset, int h, uint8_t* out) {
    LaneGroups groups;
    Groups::lanes(row, offset, groups);
    for (int g = 0; g < kGroups; ++g) store_lanes(out + g * kGroupBytes, h, groups[g]);
    store_lanes(out + kScalesOffset, h, _mm512_castps_si512(lane_scales(row, offset)));
  }

  template <int Count>
  static void multiply(const uint8_t* packed, int64_t blocks, const uint8_t* x, uint64_t x_stride, bool first,
                       const PanelRowMasks& masks, float* y, int64_t y_stride) {
    multiply_tokens<Count>(packed, blocks, x, x_stride, first, masks, y, y_stride);
  }
};

}  // namespace

const Panels kVnniPanels = {run_panel<LegacyPanel<Q8_0Groups>>, run_panel<LegacyPanel<Q4_0Groups>>};

}  // namespace synapse::cpu::legacy
