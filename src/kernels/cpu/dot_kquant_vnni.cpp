// AVX-512 VNNI tiles: Q4_K, Q5_K and Q6_K weights against Q8K activations.
//
// Same plan as dot_kquant_avx2.cpp, 64 levels per register: each
// super-block of a row is unpacked once and reused for every token, and per
// token _mm512_maddubs_epi16 (levels times int8 activations) feeds
// _mm512_dpwssd_epi32, which applies the int16 sub-block scales and
// accumulates in one step.
//
// Q4_K / Q5_K: each pair's exact int32 sums per super-block (scale * level
// * activation, min * bsums) are reduced to one total each and enter the
// pair's float with the scalar tile's two fmas (dot_kquant.cpp), so the
// tiles, the Q4_K panel (dot_kquant_panel_vnni.cpp) and the scalar tile
// agree bit for bit. One token (decode) takes rows two at a time, sharing
// the reduction and the float steps (two_rows_one_token).
//
// Q6_K likewise: each pair's exact int32 sum of scale * (level - 32) *
// activation per super-block, then one fma, as in the Q6_K panel.
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
};

// [sum of a's lanes, b's, c's, d's] (exact: int32).
__m128i lane_totals(__m512i a, __m512i b, __m512i c, __m512i d) {
  // Lanes i and i + 8 of each, two registers at a time.
  const __m512i ab = _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                                      _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512i cd = _mm512_add_epi32(_mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(1, 0, 1, 0)),
                                      _mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
  // ab: a's 8 partial sums, then b's. Two rounds of hadd and an add of the
  // 128-bit halves leave one total per register.
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(_mm512_castsi512_si256(ab), _mm512_extracti64x4_epi64(ab, 1)),
                                      _mm256_hadd_epi32(_mm512_castsi512_si256(cd), _mm512_extracti64x4_epi64(cd, 1)));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Up to four pairs' super-block step, lane by lane: acc += dwdx * isum,
// then acc -= dmdx * msum, the scalar tile's two fmas (dot_kquant.cpp).
void add_pairs(__m128 dwdx, __m128 dmdx, __m128i isum, __m128i msum, __m128& acc) {
  acc = _mm_fmadd_ps(dwdx, _mm_cvtepi32_ps(isum), acc);
  acc = _mm_fnmadd_ps(dmdx, _mm_cvtepi32_ps(msum), acc);
}

// The kTokens registers of v, then zero registers, as four.
template <int kTokens>
void pad_to_four(const __m512i (&v)[kTokens], __m512i (&out)[4]) {
  for (int t = 0; t < 4; ++t) out[t] = t < kTokens ? v[t] : _mm512_setzero_si512();
}

// Q4_K / Q5_K pairs' super-block step for one row against kTokens <= 4
// tokens (lanes of acc, dxs): the scalar tile's operations on the same
// exact int32 sums.
template <bool kFifthBit>
struct Q4KOrQ5KPairs {
  static constexpr uint64_t kBlockBytes = Q4KOrQ5KLayout<kFifthBit>::kBlockBytes;
  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m128 dxs, __m128& acc) {
    const __m128i scales_mins = unpack_scales_mins(wb + kQ4KScalesOffset);
    __m512i token_dots[kTokens], token_mins[kTokens];
    Q4KOrQ5KBlocks<kFifthBit>::template level_dots<kTokens>(wb, xb, scales_mins, token_dots);
    const __m256i mins = spread_mins(scales_mins);
    for (int t = 0; t < kTokens; ++t)
      token_mins[t] = _mm512_zextsi256_si512(_mm256_madd_epi16(mins, load256(xb[t] + kActBsumsOffset)));
    __m512i dots[4], min_sums[4];
    pad_to_four(token_dots, dots);
    pad_to_four(token_mins, min_sums);
    __m128i isum, msum;
    if constexpr (kTokens <= 2) {
      isum = lane_totals(dots[0], dots[1], min_sums[0], min_sums[1]);
      msum = _mm_unpackhi_epi64(isum, isum);
    } else {
      isum = lane_totals(dots[0], dots[1], dots[2], dots[3]);
      msum = lane_totals(min_sums[0], min_sums[1], min_sums[2], min_sums[3]);
    }
    const __m128 d_dmin = _mm_cvtph_ps(_mm_cvtsi32_si128(load_i32(wb)));
    const __m128 d = _mm_broadcastss_ps(d_dmin);
    const __m128 dmin = _mm_shuffle_ps(d_dmin, d_dmin, _MM_SHUFFLE(1, 1, 1, 1));
    add_pairs(_mm_mul_ps(dxs, d), _mm_mul_ps(dxs, dmin), isum, msum, acc);
  }
};

// One row against kTokens <= 4 tokens, each pair's float in a lane: Pairs
// (one per encoding) has kBlockBytes and add<kTokens>(wb, xb, dxs, acc),
// which adds super-block wb's contribution for the tokens' activation
// blocks xb (scales dxs) to acc. One token prefetches the bytes `ahead`
// of each super-block.
template <class Pairs, int kTokens>
void row_tokens(const uint8_t* w, uint64_t ahead, const uint8_t* x, uint64_t x_stride, int64_t blocks, float* y,
                int64_t y_stride) {
  __m128 acc = _mm_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* wb = w + b * Pairs::kBlockBytes;
    const uint8_t* xb[kTokens];
    alignas(16) float dx[4] = {};
    for (int t = 0; t < kTokens; ++t) {
      xb[t] = x + t * x_stride + b * kActBlockBytes;
      dx[t] = load_f32(xb[t]);
    }
    if constexpr (kTokens == 1) prefetch_bytes<Pairs::kBlockBytes>(wb + ahead);
    Pairs::template add<kTokens>(wb, xb, _mm_load_ps(dx), acc);
  }
  alignas(16) float out[4];
  _mm_store_ps(out, acc);
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = out[t];
}

// The DotTile of Pairs: row by row, tokens in groups of up to four.
template <class Pairs>
void rows_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
               int64_t n, float* y, int64_t y_stride) {
  using RowTokens = void (*)(const uint8_t* w, uint64_t ahead, const uint8_t* x, uint64_t x_stride, int64_t blocks,
                             float* y, int64_t y_stride);
  static constexpr RowTokens kRowTokens[kMaxTokens] = {row_tokens<Pairs, 1>, row_tokens<Pairs, 2>, row_tokens<Pairs, 3>,
                                                       row_tokens<Pairs, 4>};
  for (int r = 0; r < rows; ++r) {
    for (int t = 0; t < tokens; t += kMaxTokens) {
      const int group = tokens - t < kMaxTokens ? tokens - t : kMaxTokens;
      kRowTokens[group - 1](w + r * w_stride, kMaxTileRows * w_stride, x + t * x_stride, x_stride, n / kSuperElems,
                            y + t * y_stride + r, y_stride);
    }
  }
}

// One token against two rows at once (decode): both rows' sums share one
// reduction and one register of float steps; lane by lane these are
// row_tokens' operations, so each row's float is its bit for bit.
// Each super-block prefetches the bytes `ahead` of it, as row_tokens does.
template <bool kFifthBit>
void two_rows_one_token(const uint8_t* w0, const uint8_t* w1, uint64_t ahead, const uint8_t* x, int64_t blocks,
                        float* y0, float* y1) {
  using Blocks = Q4KOrQ5KBlocks<kFifthBit>;
  __m128 acc = _mm_setzero_ps();  // [row 0, row 1, -, -]
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* wb[2] = {w0 + b * Blocks::kBlockBytes, w1 + b * Blocks::kBlockBytes};
    const uint8_t* const xb[1] = {x + b * kActBlockBytes};
    for (const uint8_t* row : wb) prefetch_bytes<Blocks::kBlockBytes>(row + ahead);
    const __m256i bsums = load256(xb[0] + kActBsumsOffset);
    __m512i dots[2], min_sums[2];
    for (int r = 0; r < 2; ++r) {
      const __m128i scales_mins = unpack_scales_mins(wb[r] + kQ4KScalesOffset);
      __m512i row_dots[1];
      Blocks::template level_dots<1>(wb[r], xb, scales_mins, row_dots);
      dots[r] = row_dots[0];
      min_sums[r] = _mm512_zextsi256_si512(_mm256_madd_epi16(spread_mins(scales_mins), bsums));
    }
    const __m128i sums = lane_totals(dots[0], dots[1], min_sums[0],
                                     min_sums[1]);                                              // isum 0, 1, msum 0, 1
    const __m128 d_dmin = _mm_cvtph_ps(_mm_set_epi32(0, 0, load_i32(wb[1]), load_i32(wb[0])));  // d0, dmin0, d1, dmin1
    const __m128 dx = _mm_set1_ps(load_f32(xb[0]));
    const __m128 d = _mm_shuffle_ps(d_dmin, d_dmin, _MM_SHUFFLE(2, 2, 2, 0));
    const __m128 dmin = _mm_shuffle_ps(d_dmin, d_dmin, _MM_SHUFFLE(3, 3, 3, 1));
    add_pairs(_mm_mul_ps(dx, d), _mm_mul_ps(dx, dmin), sums, _mm_unpackhi_epi64(sums, sums), acc);
  }
  *y0 = _mm_cvtss_f32(acc);
  *y1 = _mm_cvtss_f32(_mm_movehdup_ps(acc));
}

// Q4_K / Q5_K tiles: one token goes two rows at a time, more tokens row by
// row (rows_tile).
template <bool kFifthBit>
void q4_k_or_q5_k_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
                       int64_t n, float* y, int64_t y_stride) {
  int r = 0;
  if (tokens == 1)
    for (; r + 2 <= rows; r += 2)
      two_rows_one_token<kFifthBit>(w + r * w_stride, w + (r + 1) * w_stride, kMaxTileRows * w_stride, x,
                                    n / kSuperElems, y + r, y + r + 1);
  if (r < rows)
    rows_tile<Q4KOrQ5KPairs<kFifthBit>>(w + r * w_stride, w_stride, rows - r, x, x_stride, tokens, n, y + r, y_stride);
}

// Q6_K super-blocks, 64 levels per register: two registers per half, the
// scales spread over their lanes with a permutation.
struct Q6KBlocks {
  static constexpr uint64_t kBlockBytes = kQ6KBytes;

  // The exact int32 sums of scale * (level - 32) * activation of
  // super-block wb against each token's block xb[t], in 16 lanes.
  template <int kTokens>
  static void level_dots(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m512i (&dots)[kTokens]) {
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
  }

  // Each pair's super-block step: the exact sum, then acc += dx * d * sum
  // (as the Q6_K panel does).
  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m128 dxs, __m128& acc) {
    __m512i dots[kTokens], padded[4];
    level_dots<kTokens>(wb, xb, dots);
    pad_to_four(dots, padded);
    const __m128i sums = lane_totals(padded[0], padded[1], padded[2], padded[3]);
    const __m128 d = _mm_set1_ps(load_f16(wb + kQ6KDOffset));
    acc = _mm_fmadd_ps(_mm_mul_ps(dxs, d), _mm_cvtepi32_ps(sums), acc);
  }
};

// One token against two Q6_K rows at once (decode), sharing the reduction
// and the float step; lane by lane these are row_tokens' operations.
void q6_k_two_rows_one_token(const uint8_t* w0, const uint8_t* w1, uint64_t ahead, const uint8_t* x, int64_t blocks,
                             float* y0, float* y1) {
  __m128 acc = _mm_setzero_ps();  // [row 0, row 1, -, -]
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* wb[2] = {w0 + b * kQ6KBytes, w1 + b * kQ6KBytes};
    const uint8_t* const xb[1] = {x + b * kActBlockBytes};
    __m512i dots[2][1];
    for (int r = 0; r < 2; ++r) {
      prefetch_bytes<kQ6KBytes>(wb[r] + ahead);
      Q6KBlocks::level_dots<1>(wb[r], xb, dots[r]);
    }
    const __m512i zero = _mm512_setzero_si512();
    const __m128i sums = lane_totals(dots[0][0], dots[1][0], zero, zero);
    const __m128 d = _mm_setr_ps(load_f16(wb[0] + kQ6KDOffset), load_f16(wb[1] + kQ6KDOffset), 0.0f, 0.0f);
    acc = _mm_fmadd_ps(_mm_mul_ps(_mm_set1_ps(load_f32(xb[0])), d), _mm_cvtepi32_ps(sums), acc);
  }
  *y0 = _mm_cvtss_f32(acc);
  *y1 = _mm_cvtss_f32(_mm_movehdup_ps(acc));
}

// Q6_K tiles: one token goes two rows at a time, more tokens row by row.
void q6_k_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
               int64_t n, float* y, int64_t y_stride) {
  int r = 0;
  if (tokens == 1)
    for (; r + 2 <= rows; r += 2)
      q6_k_two_rows_one_token(w + r * w_stride, w + (r + 1) * w_stride, kMaxTileRows * w_stride, x, n / kSuperElems,
                              y + r, y + r + 1);
  if (r < rows) rows_tile<Q6KBlocks>(w + r * w_stride, w_stride, rows - r, x, x_stride, tokens, n, y + r, y_stride);
}

}  // namespace

const Tiles kVnniTiles = {q4_k_or_q5_k_tile<false>, q4_k_or_q5_k_tile<true>, q6_k_tile};

}  // namespace synapse::cpu::kquant
