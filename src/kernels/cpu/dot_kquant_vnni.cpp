// AVX-512 VNNI tiles: Q4_K, Q5_K and Q6_K weights against Q8K activations.
//
// Same plan as dot_kquant_avx2.cpp, 64 levels per register: each
// super-block of a row is unpacked once and reused for every token, and per
// token _mm512_maddubs_epi16 (levels times int8 activations) feeds
// _mm512_dpwssd_epi32, which applies the int16 sub-block scales and
// accumulates in one step. The exact int32 sums are folded to 8 lanes and
// enter the pair's float accumulator with the same operations as in the
// AVX2 tiles (dot_kquant_simd.h), so the tile is batch invariant. One
// token (decode) takes Q4_K / Q5_K rows two at a time, sharing the float
// steps' registers (two_rows_one_token).
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
  // The exact int32 sums of scale * level * activation of super-block wb
  // against each token's block xb[t], in 16 lanes; scales_mins as
  // unpack_scales_mins gives them.
  template <int kTokens>
  static void level_dots(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m128i scales_mins,
                         __m512i (&dots)[kTokens]) {
    constexpr uint64_t kQsOffset = Q4KOrQ5KLayout<kFifthBit>::kQsOffset;
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // 32 bytes of qs in both halves: low nibbles (sub-block 2c) kept in the
    // low half, high nibbles (2c+1) shifted down in the high half.
    const __m512i nibble_shift = join(_mm256_setzero_si256(), _mm256_set1_epi16(4));
    const __m512i scales = _mm512_castsi128_si512(_mm_cvtepu8_epi16(scales_mins));
    const __m512i qh = kFifthBit ? _mm512_broadcast_i64x4(load256(wb + kQ5KQhOffset)) : _mm512_setzero_si512();

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
  }

  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m256 (&acc)[kTokens]) {
    const __m128i scales_mins = unpack_scales_mins(wb + kQ4KScalesOffset);
    __m512i dots[kTokens];
    level_dots<kTokens>(wb, xb, scales_mins, dots);
    __m256i folded[kTokens];
    fold(dots, folded);
    add_q4_k_or_q5_k_block(wb, xb, folded, spread_mins(scales_mins), acc);
  }
};

// One token against two rows at once (decode): the rows' 8-lane
// accumulators share a 512-bit register, [row 0 | row 1], so the fold and
// the float steps cost as much for two rows as row_dot's do for one. Lane
// by lane these are add_q4_k_or_q5_k_block's operations on the same exact
// sums, so each row's float is row_dot's bit for bit.
// Each super-block prefetches the bytes `ahead` of it, as row_dot does.
template <bool kFifthBit>
void two_rows_one_token(const uint8_t* w0, const uint8_t* w1, uint64_t ahead, const uint8_t* x, int64_t blocks,
                        float* y0, float* y1) {
  using Blocks = Q4KOrQ5KBlocks<kFifthBit>;
  // [row 0's d x 8 | row 1's d x 8] from [d0, dmin0, d1, dmin1].
  const __m512i d_lanes = _mm512_set_epi32(2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i dmin_lanes = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* wb[2] = {w0 + b * Blocks::kBlockBytes, w1 + b * Blocks::kBlockBytes};
    const uint8_t* const xb[1] = {x + b * kActBlockBytes};
    for (const uint8_t* row : wb) prefetch_bytes<Blocks::kBlockBytes>(row + ahead);
    __m512i dots[2];
    __m256i mins[2];
    for (int r = 0; r < 2; ++r) {
      const __m128i scales_mins = unpack_scales_mins(wb[r] + kQ4KScalesOffset);
      __m512i row_dots[1];
      Blocks::template level_dots<1>(wb[r], xb, scales_mins, row_dots);
      dots[r] = row_dots[0];
      mins[r] = spread_mins(scales_mins);
    }
    // fold() of each row: lanes i and i + 8 added, row 0 then row 1.
    const __m512i folded = _mm512_add_epi32(_mm512_shuffle_i64x2(dots[0], dots[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                            _mm512_shuffle_i64x2(dots[0], dots[1], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512i min_sums =
        _mm512_madd_epi16(join(mins[0], mins[1]), _mm512_broadcast_i64x4(load256(xb[0] + kActBsumsOffset)));
    const __m128 d_dmin =
        _mm_cvtph_ps(_mm_set_epi32(0, 0, load_i32(wb[1]), load_i32(wb[0])));  // d0, dmin0, d1, dmin1
    const __m512 d = _mm512_permutexvar_ps(d_lanes, _mm512_castps128_ps512(d_dmin));
    const __m512 dmin = _mm512_permutexvar_ps(dmin_lanes, _mm512_castps128_ps512(d_dmin));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(folded), d);
    v = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(min_sums), dmin, v);
    acc = _mm512_fmadd_ps(v, _mm512_set1_ps(load_f32(xb[0])), acc);
  }
  *y0 = lane_sum(_mm512_castps512_ps256(acc));
  *y1 = lane_sum(_mm512_extractf32x8_ps(acc, 1));
}

// Q4_K / Q5_K tiles: one token goes two rows at a time, more tokens row by
// row (tile()).
template <bool kFifthBit>
void q4_k_or_q5_k_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
                       int64_t n, float* y, int64_t y_stride) {
  if (tokens != 1) return tile<Q4KOrQ5KBlocks<kFifthBit>>(w, w_stride, rows, x, x_stride, tokens, n, y, y_stride);
  int r = 0;
  for (; r + 2 <= rows; r += 2)
    two_rows_one_token<kFifthBit>(w + r * w_stride, w + (r + 1) * w_stride, kMaxTileRows * w_stride, x,
                                  n / kSuperElems, y + r, y + r + 1);
  if (r < rows) tile<Q4KOrQ5KBlocks<kFifthBit>>(w + r * w_stride, w_stride, rows - r, x, x_stride, 1, n, y + r, y_stride);
}

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

const Tiles kVnniTiles = {q4_k_or_q5_k_tile<false>, q4_k_or_q5_k_tile<true>, tile<Q6KBlocks>};

}  // namespace synapse::cpu::kquant
