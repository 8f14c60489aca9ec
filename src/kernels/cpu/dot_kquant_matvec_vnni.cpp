// AVX-512 VNNI matrix-vector products over Q4_K, Q5_K and Q6_K weights
// (decode): eight rows per pass, one super-block of each row per step.
//
// The tiles (dot_kquant_vnni.cpp) take one or two rows at a time, and per
// row and super-block spend about half their instructions on unpacking
// scales and on the horizontal sums; a decode step then runs out of
// instructions before it runs out of memory bandwidth. Here:
// - the scales of four rows are unpacked together, in one register;
// - a Q4_K / Q5_K row's qs are read as two 64-byte loads, whose low and
//   high nibbles are the levels of sub-blocks [0 | 2], [1 | 3], [4 | 6],
//   [5 | 7]; the activation side is laid out once per call in that order
//   (with the bsums of sub-block pairs), so no level needs a shuffle;
// - the exact int32 sums of eight rows are reduced together by one tree,
//   and the float steps of eight rows share registers.
//
// Batch invariance: each (row, super-block) gets the tiles' exact int32
// sums and then their float steps in block order, so every row's float is
// bit-identical to the tile's (the tests check).
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
#include "kernels/cpu/matvec_prefetch.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::kquant {
namespace {

constexpr int kPassRows = 8;
// Prefetch requests issued at a time (NextPassPrefetch::step): a step
// spans 18-27 lines.
constexpr int kPrefetchLinesUnrolled = 8;
// Super-blocks whose activation side is prepared at a time (a 8192-wide
// row); longer rows go chunk by chunk, the accumulators kept in y.
constexpr int64_t kChunkBlocks = 32;

// The sub-blocks of 32 levels in each register of a Q4_K / Q5_K step: the
// low nibbles of qs bytes 0-63 are sub-blocks 0 and 2, their high nibbles
// 1 and 3; bytes 64-127 likewise hold 4 to 7.
constexpr int kGroupSubs[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};

__m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// The activation side of one Q4_K / Q5_K super-block.
struct alignas(64) Q4KActivations {
  int8_t qs[4][64];         // in the order of kGroupSubs
  int16_t bsum_pairs[32];   // bsums[2j] + bsums[2j+1], j < 8, in each 128-bit lane
  float dx;
};

void prepare_q4_k(const uint8_t* x, int64_t b0, int64_t count, Q4KActivations* out) {
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* block = x + (b0 + i) * kActBlockBytes;
    Q4KActivations& a = out[i];
    for (int g = 0; g < 4; ++g)
      for (int h = 0; h < 2; ++h) std::memcpy(a.qs[g] + 32 * h, block + kActQsOffset + 32 * kGroupSubs[g][h], 32);
    int16_t bsums[16];
    std::memcpy(bsums, block + kActBsumsOffset, sizeof(bsums));
    for (int lane = 0; lane < 4; ++lane)
      for (int j = 0; j < 8; ++j) a.bsum_pairs[8 * lane + j] = static_cast<int16_t>(bsums[2 * j] + bsums[2 * j + 1]);
    a.dx = load_f32(block);
  }
}

// [total of v[0]'s lanes, ..., total of v[7]'s]: exact int32 sums.
__m256i row_totals(const __m512i (&v)[kPassRows]) {
  __m512i pairs[4];
  for (int i = 0; i < 4; ++i)
    pairs[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]),
                                _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]));
  // Each 128-bit lane: the sums of its four lanes of v[0..3] (then v[4..7]).
  const __m512i low = _mm512_add_epi32(_mm512_unpacklo_epi64(pairs[0], pairs[1]), _mm512_unpackhi_epi64(pairs[0], pairs[1]));
  const __m512i high = _mm512_add_epi32(_mm512_unpacklo_epi64(pairs[2], pairs[3]), _mm512_unpackhi_epi64(pairs[2], pairs[3]));
  // Lanes [low 0+1, low 2+3, high 0+1, high 2+3], then lanes 0 and 2 the totals.
  const __m512i c = _mm512_add_epi32(_mm512_shuffle_i64x2(low, high, _MM_SHUFFLE(2, 0, 2, 0)),
                                     _mm512_shuffle_i64x2(low, high, _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i d = _mm512_add_epi32(c, _mm512_shuffle_i64x2(c, c, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castsi512_si256(_mm512_shuffle_i64x2(d, d, _MM_SHUFFLE(0, 0, 2, 0)));
}

// Q4_K / Q5_K: the bytes 0-15 of four rows' super-blocks (d, dmin, packed
// scales), a row per 128-bit lane.
__m512i load_headers(const uint8_t* wb, uint64_t w_stride) {
  __m512i h = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
  h = _mm512_inserti32x4(h, _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + w_stride)), 1);
  h = _mm512_inserti32x4(h, _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 2 * w_stride)), 2);
  return _mm512_inserti32x4(h, _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 3 * w_stride)), 3);
}

// unpack_scales_mins (dot_kquant_simd.h) for the four rows of `headers`,
// whose packed scales are dwords 1-3 of each lane: bytes 0-7 of a lane are
// its row's scales, bytes 8-15 its mins.
__m512i unpack_scales_mins4(__m512i headers) {
  const __m512i low = _mm512_shuffle_epi32(headers, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(3, 2, 3, 1)));
  const __m512i top = _mm512_shuffle_epi32(headers, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(2, 2, 1, 1)));
  const __m512i low_bits =
      _mm512_and_si512(_mm512_srlv_epi32(low, _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0, 0, 4))),
                       _mm512_broadcast_i32x4(_mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f)));
  const __m512i top_bits = _mm512_and_si512(_mm512_srli_epi32(top, 2),
                                            _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
  return _mm512_or_si512(low_bits, top_bits);
}

// Word indices that spread an int16 sub-block scale over the lanes of
// maddubs' result (levels 2i, 2i+1 in lane i).
// - q4_k[k][g]: a Q4_K / Q5_K row's, the row in 128-bit lane k, for
//   register g of a step.
// - q6_k_lanes[k]: a Q6_K row's, the row in 256-bit half k. Register g of a
//   Q6_K step holds sub-blocks 4g..4g+3 of 16 levels, one per 128-bit lane;
//   these indices put scale 4g + L in word g of lane L, and one in-lane byte
//   shuffle per register then spreads it: against a cross-lane word permute
//   per register, 1.13x on cache-resident weights (bench/kernels).
struct ScaleSpread {
  alignas(64) int16_t q4_k[4][4][32];
  alignas(64) int16_t q6_k_lanes[2][32];
  constexpr ScaleSpread() : q4_k{}, q6_k_lanes{} {
    for (int i = 0; i < 32; ++i) {
      for (int g = 0; g < 4; ++g)
        for (int k = 0; k < 4; ++k) q4_k[k][g][i] = static_cast<int16_t>(8 * k + kGroupSubs[g][i / 16]);
      for (int k = 0; k < 2; ++k) q6_k_lanes[k][i] = static_cast<int16_t>(16 * k + 4 * (i % 4) + i / 8);
    }
  }
};
constexpr ScaleSpread kSpread;

// Q4_K (Q5_K with kFifthBit) rows, eight per pass.
template <bool kFifthBit>
struct Q4KOrQ5KRows : Q4KOrQ5KLayout<kFifthBit> {
  using Layout = Q4KOrQ5KLayout<kFifthBit>;

  // The exact int32 sums of scale * level * activation of one row's
  // super-block wb, in 16 lanes; scales16: four rows' scales as int16, a
  // row per 128-bit lane, this row's in lane k.
  static __m512i level_dots(const uint8_t* wb, const Q4KActivations& a, __m512i scales16, int k) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i v[2] = {load512(wb + Layout::kQsOffset), load512(wb + Layout::kQsOffset + 64)};
    __m512i q[4];
    for (int i = 0; i < 2; ++i) {
      q[2 * i] = _mm512_and_si512(v[i], low4);
      q[2 * i + 1] = _mm512_and_si512(_mm512_srli_epi16(v[i], 4), low4);
    }
    if constexpr (kFifthBit) {
      // Level l of sub-block s takes its fifth bit from bit s of qh[l].
      const __m512i qh = _mm512_broadcast_i64x4(load256(wb + kQ5KQhOffset));
      for (int g = 0; g < 4; ++g) {
        const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << kGroupSubs[g][0])),
                                               _mm256_set1_epi8(static_cast<char>(1 << kGroupSubs[g][1])), 1);
        q[g] = _mm512_mask_add_epi8(q[g], _mm512_test_epi8_mask(qh, bit), q[g], _mm512_set1_epi8(16));
      }
    }
    __m512i dots = _mm512_setzero_si512();
    for (int g = 0; g < 4; ++g) {
      const __m512i scale = _mm512_permutexvar_epi16(load512(kSpread.q4_k[k][g]), scales16);
      dots = _mm512_dpwssd_epi32(dots, _mm512_maddubs_epi16(q[g], load512(a.qs[g])), scale);
    }
    return dots;
  }

  // acc (rows in lanes) plus super-block `wb` of eight rows against a.
  static __m256 step(const uint8_t* wb, uint64_t w_stride, const Q4KActivations& a, __m256 acc) {
    __m512i dots[kPassRows], headers[2], min_sums[2];
    for (int half = 0; half < 2; ++half) {
      headers[half] = load_headers(wb + 4 * half * w_stride, w_stride);
      const __m512i scales_mins = unpack_scales_mins4(headers[half]);
      const __m512i scales16 = _mm512_unpacklo_epi8(scales_mins, _mm512_setzero_si512());
      for (int k = 0; k < 4; ++k)
        dots[4 * half + k] = level_dots(wb + (4 * half + k) * w_stride, a, scales16, k);
      const __m512i mins16 = _mm512_unpackhi_epi8(scales_mins, _mm512_setzero_si512());
      min_sums[half] = _mm512_madd_epi16(mins16, load512(a.bsum_pairs));
    }
    const __m256i isum = row_totals(dots);
    // min_sums: a row per 128-bit lane, four lanes each.
    const __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi32(min_sums[0], min_sums[1]),
                                       _mm512_unpackhi_epi32(min_sums[0], min_sums[1]));
    const __m512i t = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(1, 0, 3, 2))));
    const __m256i msum = _mm512_castsi512_si256(
        _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), t));
    // d of rows 0-7, then dmin of rows 0-7 (words 0 and 1 of each lane).
    const __m512i d_words = _mm512_permutex2var_epi16(
        headers[0], _mm512_setr_epi32(0x00080000, 0x00180010, 0x00280020, 0x00380030, 0x00090001, 0x00190011,
                                      0x00290021, 0x00390031, 0, 0, 0, 0, 0, 0, 0, 0),
        headers[1]);
    const __m512 d_dmin = _mm512_cvtph_ps(_mm512_castsi512_si256(d_words));
    const __m256 dx = _mm256_set1_ps(a.dx);
    acc = _mm256_fmadd_ps(_mm256_mul_ps(dx, _mm512_castps512_ps256(d_dmin)), _mm256_cvtepi32_ps(isum), acc);
    return _mm256_fnmadd_ps(_mm256_mul_ps(dx, _mm512_extractf32x8_ps(d_dmin, 1)), _mm256_cvtepi32_ps(msum), acc);
  }
};

// Q6_K rows, eight per pass; the activation side is read in place.
struct Q6KRows {
  // The exact int32 sums of scale * level * activation of one row's
  // super-block wb, plus `dots`; scales16: two rows' scales as int16, this
  // row's in 256-bit half k.
  static __m512i level_dots(const uint8_t* wb, const uint8_t* xb, __m512i scales16, int k, __m512i dots) {
    const __m512i lanes = _mm512_permutexvar_epi16(load512(kSpread.q6_k_lanes[k]), scales16);
    // qh in both halves; these shifts move the high bits of the levels in
    // the low half (then the high half) to bits 4-5.
    const __m512i first_shift = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);   // left
    const __m512i second_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);  // right
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    constexpr int kLowOrHigh = 0xEA;  // ternary logic: (a & b) | c
    for (int half = 0; half < 2; ++half) {
      const __m512i ql = load512(wb + kQ6KQlOffset + 64 * half);
      const __m512i qh = _mm512_broadcast_i64x4(load256(wb + kQ6KQhOffset + 32 * half));
      const __m512i q[2] = {
          _mm512_ternarylogic_epi32(ql, low4, _mm512_and_si512(_mm512_sllv_epi16(qh, first_shift), bits45), kLowOrHigh),
          _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), low4,
                                    _mm512_and_si512(_mm512_srlv_epi16(qh, second_shift), bits45), kLowOrHigh),
      };
      for (int i = 0; i < 2; ++i) {
        const int g = 2 * half + i;
        const __m512i scale = _mm512_shuffle_epi8(lanes, _mm512_set1_epi16(static_cast<int16_t>((2 * g + 1) << 8 | 2 * g)));
        dots = _mm512_dpwssd_epi32(dots, _mm512_maddubs_epi16(q[i], load512(xb + kActQsOffset + 64 * g)), scale);
      }
    }
    return dots;
  }

  static __m256 step(const uint8_t* wb, uint64_t w_stride, const uint8_t* xb, __m256 acc) {
    // The -32 of every level against the block: -32 * scale[k] * bsums[k].
    const __m512i bsums = _mm512_broadcast_i64x4(load256(xb + kActBsumsOffset));
    __m512i dots[kPassRows];
    for (int r = 0; r < kPassRows; r += 2) {
      const __m256i pair = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + r * w_stride + kQ6KScalesOffset))),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + (r + 1) * w_stride + kQ6KScalesOffset)), 1);
      const __m512i scales16 = _mm512_cvtepi8_epi16(pair);
      const __m512i offsets = _mm512_madd_epi16(_mm512_slli_epi16(_mm512_sub_epi16(_mm512_setzero_si512(), scales16), 5), bsums);
      for (int k = 0; k < 2; ++k) {
        const __m512i start = _mm512_zextsi256_si512(k == 0 ? _mm512_castsi512_si256(offsets) : _mm512_extracti64x4_epi64(offsets, 1));
        dots[r + k] = level_dots(wb + (r + k) * w_stride, xb, scales16, k, start);
      }
    }
    const __m256i sums = row_totals(dots);
    // d: the high word of the dword ending each row's block.
    const __m256i rows = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                            _mm256_set1_epi32(static_cast<int>(w_stride)));
    const __m256i words = _mm256_i32gather_epi32(reinterpret_cast<const int*>(wb + kQ6KDOffset - 2), rows, 1);
    const __m256 d = _mm256_cvtph_ps(_mm256_cvtepi32_epi16(_mm256_srli_epi32(words, 16)));
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(load_f32(xb)), d), _mm256_cvtepi32_ps(sums), acc);
  }
};

// y[r] = dot(row r, x) for r < rows, a multiple of kPassRows.
template <bool kFifthBit>
void matvec_q4_k_or_q5_k(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y) {
  using Rows = Q4KOrQ5KRows<kFifthBit>;
  const int64_t blocks = n / kSuperElems;
  Q4KActivations act[kChunkBlocks];
  for (int64_t b0 = 0; b0 < blocks; b0 += kChunkBlocks) {
    const int64_t count = std::min(kChunkBlocks, blocks - b0);
    prepare_q4_k(x, b0, count, act);
    for (int64_t r = 0; r + kPassRows <= rows; r += kPassRows) {
      const uint8_t* row = w + r * w_stride + b0 * Rows::kBlockBytes;
      const NextPassPrefetch prefetch(row, w_stride, kPassRows, Rows::kBlockBytes, count, w + rows * w_stride, r == 0,
                                      kFifthBit ? Reread::kNo : Reread::kNextPass, MatvecWeights::kSuperBlocks);
      __m256 acc = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(y + r);
      for (int64_t b = 0; b < count; ++b) {
        prefetch.step<kPrefetchLinesUnrolled>(b);
        acc = Rows::step(row + b * Rows::kBlockBytes, w_stride, act[b], acc);
      }
      _mm256_storeu_ps(y + r, acc);
    }
  }
}

void matvec_q6_k(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y) {
  const int64_t blocks = n / kSuperElems;
  for (int64_t r = 0; r + kPassRows <= rows; r += kPassRows) {
    const uint8_t* row = w + r * w_stride;
    const NextPassPrefetch prefetch(row, w_stride, kPassRows, kQ6KBytes, blocks, w + rows * w_stride, r == 0,
                                    Reread::kNo, MatvecWeights::kSuperBlocks);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      prefetch.step<kPrefetchLinesUnrolled>(b);
      acc = Q6KRows::step(row + b * kQ6KBytes, w_stride, x + b * kActBlockBytes, acc);
    }
    _mm256_storeu_ps(y + r, acc);
  }
}

}  // namespace

const Matvecs kVnniMatvecs = {matvec_q4_k_or_q5_k<false>, matvec_q4_k_or_q5_k<true>, matvec_q6_k, kPassRows};

}  // namespace synapse::cpu::kquant
