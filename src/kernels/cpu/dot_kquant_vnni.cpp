// AVX-512 VNNI tiles: Q4_K, Q5_K and Q6_K weights against Q8K activations.
//
// Same plan as dot_kquant_avx2.cpp, 64 levels per register: each
// super-block of a row is unpacked once and reused for every token, and per
// token _mm512_maddubs_epi16 (levels times int8 activations) feeds
// _mm512_dpwssd_epi32, which applies the int16 sub-block scales and
// accumulates in one step. The exact int32 sums are folded to 8 lanes and
// enter the pair's float accumulator with the same operations as in the
// AVX2 tiles (dot_kquant_simd.h), so the tile is batch invariant.
//
// Only intrinsics and helpers with internal linkage here: see dot_kernel.h
// on why this file includes no header with external inline functions.

// GCC 12's AVX-512 insert/extract/broadcast intrinsics start from a
// deliberately undefined register and trip -Wuninitialized on their own.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/dot_kquant_simd.h"
#include "kernels/cpu/dot_kquant_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::kquant {
namespace {

__m512i load512(const uint8_t* p) { return _mm512_loadu_si512(p); }

// Two 256-bit halves as one register.
__m512i join(__m256i low, __m256i high) { return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1); }

// For each group of 64 levels and each int16 lane i of maddubs' result
// (levels 2i, 2i+1), the index of the sub-block of kSubElems it lies in.
template <int kSubElems>
struct ScaleIndex {
  alignas(64) int16_t lanes[4][32];
  constexpr ScaleIndex() : lanes{} {
    for (int g = 0; g < 4; ++g) {
      for (int i = 0; i < 32; ++i) lanes[g][i] = static_cast<int16_t>((64 * g + 2 * i) / kSubElems);
    }
  }
};
constexpr ScaleIndex<32> kScaleIndex32;
constexpr ScaleIndex<16> kScaleIndex16;

// int16 sub-block scales (lanes 0-15 of `scales`) spread over the lanes of
// group g of 64 levels.
template <int kSubElems>
__m512i spread_scales(const ScaleIndex<kSubElems>& index, int g, __m512i scales) {
  return _mm512_permutexvar_epi16(load512(reinterpret_cast<const uint8_t*>(index.lanes[g])), scales);
}

// The 16 int32 lanes of each dots[t] added pairwise into 8 (exact).
template <int kTokens>
void fold(const __m512i (&dots)[kTokens], __m256i (&folded)[kTokens]) {
  for (int t = 0; t < kTokens; ++t)
    folded[t] = _mm256_add_epi32(_mm512_castsi512_si256(dots[t]), _mm512_extracti64x4_epi64(dots[t], 1));
}

// Q4_K (or Q5_K) super-blocks, 64 levels per register: each 32 bytes of qs
// broadcast to both halves and unpacked there, scales spread by permutation.
template <bool kFifthBit>
struct Q4KOrQ5KBlocks : Q4KOrQ5KLayout<kFifthBit> {
  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m256 (&acc)[kTokens]) {
    constexpr uint64_t kQsOffset = Q4KOrQ5KLayout<kFifthBit>::kQsOffset;
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // 32 bytes of qs in both halves: low nibbles (sub-block 2c) kept in the
    // low half, high nibbles (2c+1) shifted down in the high half.
    const __m512i nibble_shift = join(_mm256_setzero_si256(), _mm256_set1_epi16(4));
    const __m128i scales_mins = unpack_scales_mins(wb + kQ4KScalesOffset);
    const __m512i scales = _mm512_castsi128_si512(_mm_cvtepu8_epi16(scales_mins));
    const __m512i qh = kFifthBit ? _mm512_broadcast_i64x4(load256(wb + kQ5KQhOffset)) : _mm512_setzero_si512();

    __m512i dots[kTokens];
    for (auto& d : dots) d = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      const __m512i packed = _mm512_broadcast_i64x4(load256(wb + kQsOffset + 32 * c));
      __m512i q = _mm512_and_si512(_mm512_srlv_epi16(packed, nibble_shift), low4);
      if constexpr (kFifthBit) {
        // Sub-block s (2c, then 2c+1) takes its fifth bit from bit s of qh.
        const __m512i bit = join(_mm256_set1_epi8(static_cast<char>(1 << (2 * c))),
                                 _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1))));
        q = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(qh, bit), q, _mm512_set1_epi8(16));
      }
      const __m512i scale = spread_scales(kScaleIndex32, c, scales);
      for (int t = 0; t < kTokens; ++t) {
        const __m512i products = _mm512_maddubs_epi16(q, load512(xb[t] + kActQsOffset + 64 * c));
        dots[t] = _mm512_dpwssd_epi32(dots[t], products, scale);
      }
    }
    __m256i folded[kTokens];
    fold(dots, folded);
    add_q4_k_or_q5_k_block(wb, xb, folded, spread_mins(scales_mins), acc);
  }
};

// Q6_K super-blocks, 64 levels per register: two registers per half, the
// scales spread over their lanes with a permutation.
struct Q6KBlocks {
  static constexpr uint64_t kBlockBytes = kQ6KBytes;

  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m256 (&acc)[kTokens]) {
    // qh in both halves; these shifts move the high bits of the levels in the
    // low half (then the high half) to bits 4-5.
    const __m512i first_shift = join(_mm256_set1_epi16(4), _mm256_set1_epi16(2));   // left
    const __m512i second_shift = join(_mm256_setzero_si256(), _mm256_set1_epi16(2));  // right
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    const __m256i scales16 = load_q6_k_scales(wb);
    const __m512i scales = _mm512_castsi256_si512(scales16);
    __m256i offset_sums[kTokens];
    q6_k_offset_sums(scales16, xb, offset_sums);
    __m512i dots[kTokens];
    for (int t = 0; t < kTokens; ++t) dots[t] = _mm512_zextsi256_si512(offset_sums[t]);

    for (int half = 0; half < 2; ++half) {
      const __m512i ql = load512(wb + kQ6KQlOffset + 64 * half);
      const __m512i qh = _mm512_broadcast_i64x4(load256(wb + kQ6KQhOffset + 32 * half));
      // Elements 0-63 and 64-127 of this half (order in codec_q6k.cpp).
      const __m512i q[2] = {
          _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(_mm512_sllv_epi16(qh, first_shift), bits45)),
          _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                          _mm512_and_si512(_mm512_srlv_epi16(qh, second_shift), bits45)),
      };
      for (int k = 0; k < 2; ++k) {
        const int group = 2 * half + k;
        const __m512i scale = spread_scales(kScaleIndex16, group, scales);
        for (int t = 0; t < kTokens; ++t) {
          const __m512i products = _mm512_maddubs_epi16(q[k], load512(xb[t] + kActQsOffset + 64 * group));
          dots[t] = _mm512_dpwssd_epi32(dots[t], products, scale);
        }
      }
    }
    __m256i folded[kTokens];
    fold(dots, folded);
    add_q6_k_block(wb, xb, folded, acc);
  }
};

}  // namespace

const Tiles kVnniTiles = {tile<Q4KOrQ5KBlocks<false>>, tile<Q4KOrQ5KBlocks<true>>, tile<Q6KBlocks>};

}  // namespace synapse::cpu::kquant
