// AVX2 tiles: Q4_K, Q5_K and Q6_K weights against Q8K activations.
//
// Rows run one after another; within a row each super-block is unpacked
// once into unsigned 4-6 bit levels and reused for every token of the tile.
// Per token, _mm256_maddubs_epi16 multiplies levels by int8 activations and
// _mm256_madd_epi16 applies the int16 sub-block scales, giving exact int32
// sums; the mins (Q4_K / Q5_K) and Q6_K's -32 offset come from the
// activation's bsums. Only then does float arithmetic start: per super-block
// each pair updates its own 8-lane accumulator with the same operations, and
// its lanes are added in a fixed order at the end, so a pair's result does
// not depend on the tile it was computed in (dot_kquant_simd.h).
//
// Only intrinsics and helpers with internal linkage here: see dot_kernel.h
// on why this file includes no header with external inline functions.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/dot_kquant_simd.h"
#include "kernels/cpu/dot_kquant_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::kquant {
namespace {

// _mm256_shuffle_epi8 masks that broadcast one int16 element of each
// 128-bit lane: same[j] element j in both lanes, pair[k] element 2k in the
// low lane and 2k+1 in the high one. A table, so they stay memory operands.
struct BroadcastMasks {
  alignas(32) uint8_t same[8][32];
  alignas(32) uint8_t pair[4][32];
  constexpr BroadcastMasks() : same{}, pair{} {
    for (int i = 0; i < 32; ++i) {
      const int byte = i % 2;
      for (int j = 0; j < 8; ++j) same[j][i] = static_cast<uint8_t>(2 * j + byte);
      for (int k = 0; k < 4; ++k) pair[k][i] = static_cast<uint8_t>(2 * (2 * k + i / 16) + byte);
    }
  }
};
constexpr BroadcastMasks kBroadcastMasks;

__m256i broadcast_i16(__m256i v, const uint8_t (&mask)[32]) {
  return _mm256_shuffle_epi8(v, _mm256_load_si256(reinterpret_cast<const __m256i*>(mask)));
}

// Bit k of every byte of qh, moved to bit 4 (worth 16 in a level).
__m256i fifth_bit(__m256i qh, int k) {
  const __m256i moved = k <= 4 ? _mm256_slli_epi16(qh, 4 - k) : _mm256_srli_epi16(qh, k - 4);
  return _mm256_and_si256(moved, _mm256_set1_epi8(0x10));
}

// Q4_K (or Q5_K) super-blocks, 32 levels per register: each 32 bytes of qs
// split into a low- and a high-nibble register, each with its own scale.
template <bool kFifthBit>
struct Q4KOrQ5KBlocks : Q4KOrQ5KLayout<kFifthBit> {
  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m256 (&acc)[kTokens]) {
    constexpr uint64_t kQsOffset = Q4KOrQ5KLayout<kFifthBit>::kQsOffset;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m128i scales_mins = unpack_scales_mins(wb + kQ4KScalesOffset);
    const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));
    const __m256i qh = kFifthBit ? load256(wb + kQ5KQhOffset) : _mm256_setzero_si256();

    __m256i dots[kTokens];
    for (auto& d : dots) d = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      // Sub-block 2c in the low nibbles, 2c+1 in the high ones.
      const __m256i q = load256(wb + kQsOffset + 32 * c);
      __m256i lo = _mm256_and_si256(q, low4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      if constexpr (kFifthBit) {
        lo = _mm256_or_si256(lo, fifth_bit(qh, 2 * c));
        hi = _mm256_or_si256(hi, fifth_bit(qh, 2 * c + 1));
      }
      const __m256i scale_lo = broadcast_i16(scales, kBroadcastMasks.same[2 * c]);
      const __m256i scale_hi = broadcast_i16(scales, kBroadcastMasks.same[2 * c + 1]);
      for (int t = 0; t < kTokens; ++t) {
        const uint8_t* qx = xb[t] + kActQsOffset + 64 * c;
        dots[t] = _mm256_add_epi32(dots[t], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(qx)), scale_lo));
        dots[t] = _mm256_add_epi32(dots[t], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(qx + 32)), scale_hi));
      }
    }
    add_q4_k_or_q5_k_block(wb, xb, dots, spread_mins(scales_mins), acc);
  }
};

// Q6_K super-blocks, 32 levels per register: four registers per half,
// each sub-block pair's scales broadcast with a shuffle mask.
struct Q6KBlocks {
  static constexpr uint64_t kBlockBytes = kQ6KBytes;

  template <int kTokens>
  static void add(const uint8_t* wb, const uint8_t* const (&xb)[kTokens], __m256 (&acc)[kTokens]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    const __m256i scales = load_q6_k_scales(wb);
    __m256i dots[kTokens];
    q6_k_offset_sums(scales, xb, dots);

    for (int half = 0; half < 2; ++half) {
      const __m256i ql0 = load256(wb + kQ6KQlOffset + 64 * half);
      const __m256i ql1 = load256(wb + kQ6KQlOffset + 64 * half + 32);
      const __m256i qh = load256(wb + kQ6KQhOffset + 32 * half);
      // Elements 32k .. 32k+31 of this half (order in codec_q6k.cpp).
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45)),
      };
      // This half's eight scales in both 128-bit lanes.
      // (Two calls: clang needs the lane selector as a literal constant.)
      const __m256i half_scales =
          half ? _mm256_permute2x128_si256(scales, scales, 0x11) : _mm256_permute2x128_si256(scales, scales, 0x00);
      for (int k = 0; k < 4; ++k) {
        // Sub-block 2k of the half in the low 128-bit lane, 2k+1 in the high.
        const __m256i scale = broadcast_i16(half_scales, kBroadcastMasks.pair[k]);
        for (int t = 0; t < kTokens; ++t) {
          const __m256i qx = load256(xb[t] + kActQsOffset + 128 * half + 32 * k);
          dots[t] = _mm256_add_epi32(dots[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q[k], qx), scale));
        }
      }
    }
    add_q6_k_block(wb, xb, dots, acc);
  }
};

}  // namespace

const Tiles kAvx2Tiles = {tile<Q4KOrQ5KBlocks<false>>, tile<Q4KOrQ5KBlocks<true>>, tile<Q6KBlocks>};

}  // namespace synapse::cpu::kquant
