// Pieces shared by the SIMD tiles of the k-quant encodings
// (dot_kquant_avx2.cpp, dot_kquant_vnni.cpp, dot_kquant_panel_vnni.cpp):
// the Q4_K / Q5_K scale unpacking, and for the AVX2 tiles the float steps
// per super-block (the same for every tile shape, so a pair's float does
// not depend on the tile) and the row-by-row tile driver. The VNNI tiles
// and panels have float steps of their own (see dot_kquant_vnni.cpp).
//
// Internal linkage only, for the reason given in simd_helpers.h: each SIMD
// translation unit gets its own copy compiled with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/dot_kquant_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::kquant {
namespace {

constexpr int kMaxTokens = 4;

// The block layout of Q4_K, or of Q5_K (whose levels have a fifth bit in
// qh): both have the same scales and differ in block size and qs offset.
template <bool kFifthBit>
struct Q4KOrQ5KLayout {
  static constexpr uint64_t kBlockBytes = kFifthBit ? kQ5KBytes : kQ4KBytes;
  static constexpr uint64_t kQsOffset = kFifthBit ? kQ5KQsOffset : kQ4KQsOffset;
  static_assert(kQ4KScalesOffset == kQ5KScalesOffset);
};

// The 12 packed bytes of Q4_K / Q5_K as bytes 0-7: the eight 6-bit scales,
// bytes 8-15: the eight 6-bit mins (layout in blocks.h, unpack_scale_min).
// Reads 16 bytes; the block goes on after its scales.
inline __m128i unpack_scales_mins(const uint8_t* packed) {
  // As 32-bit words w0, w1, w2: the low 6 bits of each byte of w0 (w1) are
  // scales (mins) 0-3; w2's low (high) nibbles are those of scales (mins)
  // 4-7, whose top two bits are the top two bits of w0's (w1's) bytes.
  const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
  const __m128i low = _mm_shuffle_epi32(words, _MM_SHUFFLE(2, 1, 2, 0));  // w0, w2, w1, w2
  const __m128i top = _mm_shuffle_epi32(words, _MM_SHUFFLE(1, 1, 0, 0));  // w0, w0, w1, w1
  const __m128i low_bits = _mm_and_si128(_mm_srlv_epi32(low, _mm_setr_epi32(0, 0, 0, 4)),
                                         _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
  const __m128i top_bits = _mm_and_si128(_mm_srli_epi32(top, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
  return _mm_or_si128(low_bits, top_bits);
}

// The mins of unpack_scales_mins as int16, min j in lanes 2j and 2j+1:
// madd against an activation block's bsums sums each 32 elements.
inline __m256i spread_mins(__m128i scales_mins) {
  return _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_mins, scales_mins));
}

// Q6_K's 16 int8 sub-block scales as int16.
inline __m256i load_q6_k_scales(const uint8_t* wb) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + kQ6KScalesOffset)));
}

// The -32 of every Q6_K level against token t's block xb[t]:
// -32 * sum_k scale[k] * bsums[k], exact in int32, in 8 lanes.
template <int kTokens>
void q6_k_offset_sums(__m256i scales, const uint8_t* const (&xb)[kTokens], __m256i (&sums)[kTokens]) {
  const __m256i neg32_scales = _mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), scales), 5);
  for (int t = 0; t < kTokens; ++t) sums[t] = _mm256_madd_epi16(load256(xb[t] + kActBsumsOffset), neg32_scales);
}

// acc[t] += dx * (d * dots[t] - dmin * (mins . bsums)), lane by lane, for
// the Q4_K / Q5_K super-block wb against token t's activation block xb[t];
// dots[t] are the exact int32 sums of scale * level * activation.
template <int kTokens>
void add_q4_k_or_q5_k_block(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], const __m256i (&dots)[kTokens],
                            __m256i mins, __m256 (&acc)[kTokens]) {
  const __m128 d_dmin = _mm_cvtph_ps(_mm_cvtsi32_si128(load_i32(wb)));
  const __m256 d = _mm256_broadcastss_ps(d_dmin);
  const __m256 dmin = _mm256_broadcastss_ps(_mm_movehdup_ps(d_dmin));
  for (int t = 0; t < kTokens; ++t) {
    const __m256i min_sums = _mm256_madd_epi16(mins, load256(xb[t] + kActBsumsOffset));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(dots[t]), d);
    v = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(min_sums), dmin, v);
    acc[t] = _mm256_fmadd_ps(v, _mm256_set1_ps(load_f32(xb[t])), acc[t]);
  }
}

// acc[t] += dx * (d * dots[t]), lane by lane, for the Q6_K super-block wb
// (dots[t] already include the -32 offset of every level).
template <int kTokens>
void add_q6_k_block(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], const __m256i (&dots)[kTokens],
                    __m256 (&acc)[kTokens]) {
  const __m256 d = _mm256_set1_ps(load_f16(wb + kQ6KDOffset));
  for (int t = 0; t < kTokens; ++t) {
    const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(dots[t]), d);
    acc[t] = _mm256_fmadd_ps(v, _mm256_set1_ps(load_f32(xb[t])), acc[t]);
  }
}

// Starts fetching the kBytes bytes at p into the cache: a matrix-vector
// product calls it for the bytes `ahead` of the block it reads (the same
// offset in the next tile's rows), as on its own the hardware prefetcher
// runs too little ahead to hide the memory latency. A prefetch never
// faults, even past the end of the matrix.
template <uint64_t kBytes>
void prefetch_bytes(const uint8_t* p) {
  for (uint64_t line = 0; line < kBytes; line += 64) _mm_prefetch(reinterpret_cast<const char*>(p + line), _MM_HINT_T0);
}

// One weight row against kTokens activation rows. Blocks (one per encoding
// and target) has kBlockBytes and add<kTokens>(wb, xb, acc), which adds
// super-block wb's contribution for token t (activation block xb[t]) to
// the 8-lane accumulator acc[t]; a pair's result is acc's lane sum. One
// token (memory-bound) prefetches the bytes `ahead` of each super-block.
template <class Blocks, int kTokens>
void row_dot(const uint8_t* w, uint64_t ahead, const uint8_t* x, uint64_t x_stride, int64_t blocks, float* y,
             int64_t y_stride) {
  __m256 acc[kTokens];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* xb[kTokens];
    for (int t = 0; t < kTokens; ++t) xb[t] = x + t * x_stride + b * kActBlockBytes;
    if constexpr (kTokens == 1) prefetch_bytes<Blocks::kBlockBytes>(w + b * Blocks::kBlockBytes + ahead);
    Blocks::template add<kTokens>(w + b * Blocks::kBlockBytes, xb, acc);
  }
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = lane_sum(acc[t]);
}

// The DotTile of Blocks: row by row, tokens in groups of up to kMaxTokens.
template <class Blocks>
void tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens, int64_t n,
          float* y, int64_t y_stride) {
  using RowDot = void (*)(const uint8_t* w, uint64_t ahead, const uint8_t* x, uint64_t x_stride, int64_t blocks,
                          float* y, int64_t y_stride);
  static constexpr RowDot kRowDots[kMaxTokens] = {row_dot<Blocks, 1>, row_dot<Blocks, 2>, row_dot<Blocks, 3>,
                                                  row_dot<Blocks, 4>};
  for (int r = 0; r < rows; ++r) {
    for (int t = 0; t < tokens; t += kMaxTokens) {
      const int group = tokens - t < kMaxTokens ? tokens - t : kMaxTokens;
      kRowDots[group - 1](w + r * w_stride, kMaxTileRows * w_stride, x + t * x_stride, x_stride, n / kSuperElems,
                          y + t * y_stride + r, y_stride);
    }
  }
}

}  // namespace
}  // namespace synapse::cpu::kquant
