// AVX2 tiles: Q8_0, Q4_0 and Q5_0 weights against Q8 activations.
//
// A block's integer dot is exact in int32, so the order in which its 32
// products are summed does not matter: per token, the four rows' sums are
// gathered into the lanes of one vector, and the float part
// acc = fma(dw * dx, sum, acc) then runs lane by lane in block order. A
// pair's float never touches another lane, which makes the tile batch
// invariant by construction.
//
// Only intrinsics and helpers with internal linkage here: see dot_kernel.h
// on why this file includes no header with external inline functions.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/dot_legacy_simd.h"
#include "kernels/cpu/dot_legacy_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::legacy {
namespace {

// Sums the eight int32 lanes of each row's vector: lane r of the result is
// the sum of sums[r].
__m128i sum_rows(const __m256i (&sums)[kRows]) {
  const __m256i pairs = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]), _mm256_hadd_epi32(sums[2], sums[3]));
  return _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
}

// Q8_0 weights are signed like the activations; maddubs wants one unsigned
// operand, so it multiplies |w| by x carrying w's sign.
struct Q8_0Weights {
  static constexpr uint64_t kBlockBytes = 34;
  static constexpr int kActSumWeight = 0;  // no offset in the weights
  struct Block {
    __m256i q;
    __m256i magnitude;
  };
  static Block load(const uint8_t* block) {
    const __m256i q = load256(block + kWeightQsOffset);
    return {q, _mm256_abs_epi8(q)};
  }
  // Eight int32 partial sums of the block's 32 products.
  static __m256i dot(const Block& w, __m256i x) {
    const __m256i products = _mm256_maddubs_epi16(w.magnitude, _mm256_sign_epi8(x, w.q));
    return _mm256_madd_epi16(products, _mm256_set1_epi16(1));
  }
};

// Q4_0 nibbles q are unsigned, so maddubs takes them as they are and the
// -8 offset comes off afterwards as 8 * (sum of the activation block).
struct Q4_0Weights {
  static constexpr uint64_t kBlockBytes = 18;
  static constexpr int kActSumWeight = 8;
  struct Block {
    __m256i q;
  };
  static Block load(const uint8_t* block) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + kWeightQsOffset));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return {_mm256_and_si256(both, _mm256_set1_epi8(0x0f))};
  }
  static __m256i dot(const Block& w, __m256i x) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w.q, x), _mm256_set1_epi16(1));
  }
};

// Q5_0 levels q in [0, 31] (a nibble and a fifth bit from qh) are unsigned
// too; their -16 offset comes off as 16 * (sum of the activation block).
struct Q5_0Weights {
  static constexpr uint64_t kBlockBytes = 22;
  static constexpr int kActSumWeight = 16;
  using Block = Q4_0Weights::Block;
  static Block load(const uint8_t* block) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 6));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    // Byte i takes bit i of the 32 qh bits: byte i / 8 of qh, masked.
    const __m256i qh = _mm256_shuffle_epi8(_mm256_set1_epi32(load_i32(block + 2)),
                                           _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                              0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
    const __m256i fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit), _mm256_set1_epi8(16));
    return {_mm256_or_si256(_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), fifth)};
  }
  static __m256i dot(const Block& w, __m256i x) { return Q4_0Weights::dot(w, x); }
};

// The tile for exactly kTokens tokens (tile_for_tokens picks it).
template <class Weights>
struct Tile {
  template <int kTokens>
  static void run(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int64_t n,
                  float* y, int64_t y_stride) {
    const uint8_t* row[kRows];
    select_rows(w, w_stride, rows, row);
    __m128 acc[kTokens];
    for (int t = 0; t < kTokens; ++t) acc[t] = _mm_setzero_ps();

    for (int64_t b = 0; b < n / kBlockElems; ++b) {
      const uint64_t w_offset = b * Weights::kBlockBytes;
      typename Weights::Block blocks[kRows];
      for (int r = 0; r < kRows; ++r) {
        blocks[r] = Weights::load(row[r] + w_offset);
        prefetch_next_tile(row[r] + w_offset, w_stride);
      }
      const __m128 w_scales = load_row_scales(row, w_offset);
      for (int t = 0; t < kTokens; ++t) {
        const uint8_t* act = x + t * x_stride + b * kActBlockBytes;
        const __m256i qx = load256(act + kActQsOffset);
        __m256i partial[kRows];
        for (int r = 0; r < kRows; ++r) partial[r] = Weights::dot(blocks[r], qx);
        __m128i sums = sum_rows(partial);
        if constexpr (Weights::kActSumWeight != 0)
          sums = _mm_sub_epi32(sums, _mm_set1_epi32(Weights::kActSumWeight * load_i32(act + kActSumOffset)));
        const __m128 scales = _mm_mul_ps(w_scales, _mm_set1_ps(load_f32(act)));
        acc[t] = _mm_fmadd_ps(scales, _mm_cvtepi32_ps(sums), acc[t]);
      }
    }

    for (int t = 0; t < kTokens; ++t) store_rows(acc[t], rows, y + t * y_stride);
  }
};

}  // namespace

const Tiles kAvx2Tiles = {tile_for_tokens<Tile<Q8_0Weights>>, tile_for_tokens<Tile<Q4_0Weights>>,
                          tile_for_tokens<Tile<Q5_0Weights>>};

}  // namespace synapse::cpu::legacy
