// AVX-512 VNNI panels: Q4_K and Q6_K weights against many tokens' Q8K
// activations (prefill), the rows-in-lanes micro-kernel of
// dot_legacy_panel_vnni.cpp for super-blocks.
//
// The panel's rows are repacked so that one 512-bit load gives the same 4
// levels of a super-block for 16 rows (levels as unsigned bytes: Q4_K's
// nibbles, Q6_K's 6-bit q before its -32); a token's matching 4 activation
// bytes are broadcast to every lane, and vpdpbusd leaves each lane holding
// its row's exact sum over a sub-block (32 elements for Q4_K, 16 for
// Q6_K). That sum times the row's sub-block scale (vpmulld) adds up to the
// exact int32 isum = sum of scale * level * activation; vpdpwssd of the
// rows' mins (Q6_K: 32 * scale) against the token's bsums pairs gives the
// exact int32 msum.
//
// Batch invariance: a pair's float then takes the same float steps per
// super-block as the VNNI tiles on the same exact sums (dot_kquant_vnni.cpp:
// Q4_K the scalar tile's two fmas, Q6_K one fma of isum - msum), so the
// panel matches them bit for bit (the tests check it) whatever the panel's
// rows, tokens or grouping.
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

#include "kernels/cpu/dot_kquant_simd.h"
#include "kernels/cpu/dot_kquant_tiles.h"
#include "kernels/cpu/panel_driver_vnni.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::kquant {
namespace {

constexpr int kGroups = kSuperElems / 4;      // 4-level groups per super-block
constexpr int kBsumPairs = 8;                 // int32 pairs of an activation block's bsums
// One repacked super-block of the panel's rows, each part kPanelRows lanes
// of 4 bytes: the level groups (group i holds levels 4i to 4i + 3), the
// sub-block scales (int32), the int16 pairs of mins against each bsums
// pair, then d and dmin (float; Q6_K leaves dmin unset).
constexpr uint64_t kLaneBytes = kPanelRows * sizeof(uint32_t);
constexpr uint64_t kScalesOffset = kGroups * kLaneBytes;
// Super-blocks repacked at a time: the packed chunk (about 20 KiB) stays in
// L1 while every token streams past it.
constexpr int64_t kPanelChunkBlocks = 2;
// Tokens per micro-kernel: per token and half a scaled sum, a sub-block sum
// and a float accumulator; with the weights and scales that fills the 32
// registers.
constexpr int kMicroTokens = 4;

void store_lane(uint8_t* part, int r, uint32_t value) {
  std::memcpy(part + r * sizeof(uint32_t), &value, sizeof(value));
}
void store_lane(uint8_t* part, int r, float value) { std::memcpy(part + r * sizeof(float), &value, sizeof(value)); }

// The packed layout of a super-block with kSubBlocks sub-blocks.
template <int kSubBlocks>
struct PackedLayout {
  static constexpr int kSubGroups = kGroups / kSubBlocks;  // level groups per sub-block
  static constexpr uint64_t kMinsOffset = kScalesOffset + kSubBlocks * kLaneBytes;
  static constexpr uint64_t kDOffset = kMinsOffset + kBsumPairs * kLaneBytes;
  static constexpr uint64_t kDminOffset = kDOffset + kLaneBytes;
  static constexpr uint64_t kPackedBytes = kDminOffset + kLaneBytes;
  static_assert(kPackedBytes % 64 == 0, "packed super-blocks keep their parts 64-byte aligned");
  static constexpr int64_t kBlockElems = kSuperElems;
  static constexpr uint64_t kActBytes = kActBlockBytes;
  static constexpr int64_t kChunkBlocks = kPanelChunkBlocks;
  static constexpr int64_t kFewTokensChunkBlocks = kPanelChunkBlocks;  // one chunk size for any token count
  static constexpr int kTokens = kMicroTokens;
};

// Q4_K: 8 sub-blocks of 32; the scalar tile's float steps per super-block,
// acc += dx * d * isum, then acc -= dx * dmin * msum (dot_kquant.cpp).
struct Q4KPanel : PackedLayout<8> {
  static constexpr uint64_t kEncodedBytes = kQ4KBytes;

  // Super-blocks at `offset` of the 16 rows `row` into the lanes of
  // register half h. 32 bytes of qs hold sub-block 2c in the low nibbles,
  // 2c+1 in the high: 8 level groups each, transposed 16 rows at a time.
  static void pack_lanes(const uint8_t* const* row, uint64_t offset, int h, uint8_t* out) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int c = 0; c < 4; ++c) {
      __m512i groups[8];
      transpose_row_groups(row, offset + kQ4KQsOffset + 32 * c, groups);
      for (int j = 0; j < 8; ++j) {
        store_lanes(out + (2 * c * kSubGroups + j) * kLaneBytes, h, _mm512_and_si512(groups[j], low4));
        store_lanes(out + ((2 * c + 1) * kSubGroups + j) * kLaneBytes, h,
                    _mm512_and_si512(_mm512_srli_epi16(groups[j], 4), low4));
      }
    }
    for (int r = 0; r < kPanelLanes; ++r) {
      const uint8_t* block = row[r] + offset;
      const int lane = h * kPanelLanes + r;
      alignas(16) uint8_t scales_mins[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(scales_mins), unpack_scales_mins(block + kQ4KScalesOffset));
      for (int j = 0; j < 8; ++j) {
        store_lane(out + kScalesOffset + j * kLaneBytes, lane, uint32_t{scales_mins[j]});
        store_lane(out + kMinsOffset + j * kLaneBytes, lane, scales_mins[8 + j] * 0x00010001u);
      }
      store_lane(out + kDOffset, lane, load_f16(block));
      store_lane(out + kDminOffset, lane, load_f16(block + 2));
    }
  }

  static __m512 add(const uint8_t* packed, int h, __m512 dx, __m512i isum, __m512i msum, __m512 acc) {
    const __m512 d = _mm512_load_ps(packed + kDOffset + h * kPanelLanes * sizeof(float));
    const __m512 dmin = _mm512_load_ps(packed + kDminOffset + h * kPanelLanes * sizeof(float));
    acc = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(isum), acc);
    return _mm512_fnmadd_ps(_mm512_mul_ps(dx, dmin), _mm512_cvtepi32_ps(msum), acc);
  }
};

// Q6_K: 16 sub-blocks of 16, levels q - 32 with q in 0-63; the -32 is
// msum = 32 * sum scale * bsums, and the tiles' float step is
// acc += dx * d * (isum - msum) (dot_kquant_vnni.cpp).
struct Q6KPanel : PackedLayout<16> {
  static constexpr uint64_t kEncodedBytes = kQ6KBytes;

  // Super-blocks at `offset` of the 16 rows `row` into the lanes of
  // register half h. Per 128-element half, elements l, l+32, l+64, l+96
  // take their high two bits from qh[l]; l and l+64 share ql[l], l+32 and
  // l+96 share ql[l+32]. Each 32 levels of the 16 rows are 8 level groups,
  // transposed together.
  static void pack_lanes(const uint8_t* const* row, uint64_t offset, int h, uint8_t* out) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    for (int half = 0; half < 2; ++half) {
      __m256i levels[4][kPanelLanes];
      for (int r = 0; r < kPanelLanes; ++r) {
        const uint8_t* block = row[r] + offset;
        const __m256i ql0 = load256(block + kQ6KQlOffset + 64 * half);
        const __m256i ql1 = load256(block + kQ6KQlOffset + 64 * half + 32);
        const __m256i qh = load256(block + kQ6KQhOffset + 32 * half);
        levels[0][r] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
        levels[1][r] = _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
        levels[2][r] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45));
        levels[3][r] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                                       _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
      }
      for (int k = 0; k < 4; ++k) {
        __m512i groups[8];
        transpose_row_groups(levels[k], groups);
        for (int j = 0; j < 8; ++j) store_lanes(out + (32 * half + 8 * k + j) * kLaneBytes, h, groups[j]);
      }
    }
    for (int r = 0; r < kPanelLanes; ++r) {
      const uint8_t* block = row[r] + offset;
      const int lane = h * kPanelLanes + r;
      const auto* scales = reinterpret_cast<const int8_t*>(block + kQ6KScalesOffset);
      for (int k = 0; k < 16; ++k)
        store_lane(out + kScalesOffset + k * kLaneBytes, lane, static_cast<uint32_t>(int32_t{scales[k]}));
      for (int m = 0; m < kBsumPairs; ++m) {
        const auto low = static_cast<uint16_t>(32 * scales[2 * m]), high = static_cast<uint16_t>(32 * scales[2 * m + 1]);
        store_lane(out + kMinsOffset + m * kLaneBytes, lane, uint32_t{low} | uint32_t{high} << 16);
      }
      store_lane(out + kDOffset, lane, load_f16(block + kQ6KDOffset));
    }
  }

  static __m512 add(const uint8_t* packed, int h, __m512 dx, __m512i isum, __m512i msum, __m512 acc) {
    const __m512 d = _mm512_load_ps(packed + kDOffset + h * kPanelLanes * sizeof(float));
    return _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(_mm512_sub_epi32(isum, msum)), acc);
  }
};

__m512i lanes_at(const uint8_t* part, int h) { return _mm512_load_si512(part + h * kPanelLanes * sizeof(uint32_t)); }

// Count tokens (x at their rows' first super-block of the chunk) against
// the packed chunk: y[t * y_stride + r] continues the pairs' accumulators
// (starts them at 0 when `first`). Forced inline into the dispatch on Count,
// so that every array here lives in registers.
template <class Format, int Count>
[[gnu::always_inline]] inline void multiply_tokens(const uint8_t* packed, int64_t blocks, const uint8_t* x,
                                                   uint64_t x_stride, bool first, const PanelRowMasks& masks, float* y,
                                                   int64_t y_stride) {
  constexpr int kSubGroups = Format::kSubGroups;
  const uint8_t* token[Count];
  for (int t = 0; t < Count; ++t) token[t] = x + t * x_stride;
  __m512 acc[Count][kPanelHalves];
  for (int t = 0; t < Count; ++t)
    for (int h = 0; h < kPanelHalves; ++h)
      acc[t][h] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(masks.half[h], y + t * y_stride + h * kPanelLanes);

  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = packed + b * Format::kPackedBytes;
    const uint64_t act = b * kActBlockBytes;
    // isum: sum over sub-blocks of scale times the sub-block's exact sum.
    __m512i isum[Count][kPanelHalves];
    for (int t = 0; t < Count; ++t)
      for (int h = 0; h < kPanelHalves; ++h) isum[t][h] = _mm512_setzero_si512();
    for (int j = 0; j < kGroups / kSubGroups; ++j) {
      __m512i sub[Count][kPanelHalves];
      for (int t = 0; t < Count; ++t)
        for (int h = 0; h < kPanelHalves; ++h) sub[t][h] = _mm512_setzero_si512();
      for (int g = kSubGroups * j; g < kSubGroups * (j + 1); ++g) {
        __m512i levels[kPanelHalves];
        for (int h = 0; h < kPanelHalves; ++h) levels[h] = lanes_at(block + g * kLaneBytes, h);
        for (int t = 0; t < Count; ++t) {
          const __m512i xg = _mm512_set1_epi32(load_i32(token[t] + act + kActQsOffset + 4 * g));
          for (int h = 0; h < kPanelHalves; ++h) sub[t][h] = _mm512_dpbusd_epi32(sub[t][h], levels[h], xg);
        }
      }
      for (int h = 0; h < kPanelHalves; ++h) {
        const __m512i scale = lanes_at(block + kScalesOffset + j * kLaneBytes, h);
        for (int t = 0; t < Count; ++t) isum[t][h] = _mm512_add_epi32(isum[t][h], _mm512_mullo_epi32(sub[t][h], scale));
      }
    }
    // msum: the mins against the token's bsums, a pair at a time.
    __m512i msum[Count][kPanelHalves];
    for (int t = 0; t < Count; ++t)
      for (int h = 0; h < kPanelHalves; ++h) msum[t][h] = _mm512_setzero_si512();
    for (int m = 0; m < kBsumPairs; ++m) {
      for (int h = 0; h < kPanelHalves; ++h) {
        const __m512i mins = lanes_at(block + Format::kMinsOffset + m * kLaneBytes, h);
        for (int t = 0; t < Count; ++t) {
          const __m512i bsums = _mm512_set1_epi32(load_i32(token[t] + act + kActBsumsOffset + 4 * m));
          msum[t][h] = _mm512_dpwssd_epi32(msum[t][h], mins, bsums);
        }
      }
    }
    for (int t = 0; t < Count; ++t) {
      const __m512 dx = _mm512_set1_ps(load_f32(token[t] + act));
      for (int h = 0; h < kPanelHalves; ++h) acc[t][h] = Format::add(block, h, dx, isum[t][h], msum[t][h], acc[t][h]);
    }
  }

  for (int t = 0; t < Count; ++t)
    for (int h = 0; h < kPanelHalves; ++h) _mm512_mask_storeu_ps(y + t * y_stride + h * kPanelLanes, masks.half[h], acc[t][h]);
}

// A k-quant format as the panel driver wants it: the micro-kernel above
// for Count tokens.
template <class Format>
struct KQuantPanel : Format {
  template <int Count>
  static void multiply(const uint8_t* packed, int64_t blocks, const uint8_t* x, uint64_t x_stride, bool first,
                       const PanelRowMasks& masks, float* y, int64_t y_stride) {
    multiply_tokens<Format, Count>(packed, blocks, x, x_stride, first, masks, y, y_stride);
  }
};

}  // namespace

const Panels kVnniPanels = {run_panel<KQuantPanel<Q4KPanel>>, run_panel<KQuantPanel<Q6KPanel>>};

}  // namespace synapse::cpu::kquant
