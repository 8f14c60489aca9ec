// AVX-512 VNNI tiles: Q8_0, Q4_0 and Q5_0 weights against Q8 activations.
//
// vpdpbusd multiplies unsigned by signed bytes, so the weights go in as
// unsigned values with a known offset (Q4_0 / Q5_0 levels as stored, Q8_0 values
// plus 128) and the offset times the activation block's sum comes off the
// exact int32 dot afterwards. A 512-bit register holds a weight block twice
// against the blocks of two tokens (or, for one token, two consecutive
// blocks against theirs), so every product instruction serves two pairs.
// From three tokens on, a register holds one half of a weight block four
// times against that half of four tokens' blocks instead: two products per
// row then cover all 32 elements of every token, and the lanes are summed
// once rather than once per token pair.
//
// As in the AVX2 tile, each pair's exact block sum is gathered into its own
// lane, and the float part acc = fma(dw * dx, sum, acc) runs lane by lane in
// block order, so a pair's float never depends on the tile shape. Rows past
// `rows` repeat the last row and missing tokens repeat present ones; those
// lanes are computed and dropped.
//
// Only intrinsics and helpers with internal linkage here: see dot_kernel.h
// on why this file includes no header with external inline functions.

// GCC 12 reports its own _mm512_undefined_* idiom in the AVX-512 headers as
// (maybe-)uninitialized (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/dot_legacy_simd.h"
#include "kernels/cpu/dot_legacy_tiles.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::legacy {
namespace {

constexpr int kSlots = 4;  // 128-bit quarters of a 512-bit register

// The four rows' block scales at two offsets as floats:
// [block at first: rows 0-3 | block at second: rows 0-3].
__m256 load_row_scales(const uint8_t* const (&row)[kRows], uint64_t first, uint64_t second) {
  const __m128i bits = _mm_set_epi64x(static_cast<int64_t>(row_scale_bits(row, second)),
                                      static_cast<int64_t>(row_scale_bits(row, first)));
  return _mm256_cvtph_ps(bits);
}

// Bytes [from, from + 16) of the activation blocks act[0..3], act[s] in
// quarter s.
__m512i load_slot_halves(const uint8_t* const (&act)[kSlots], uint64_t from) {
  const auto half = [&](int s) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(act[s] + kActQsOffset + from)); };
  static_assert(kSlots == 4);
  // Literal lane indices: clang needs the insert position as a constant.
  __m512i v = _mm512_castsi128_si512(half(0));
  v = _mm512_inserti32x4(v, half(1), 1);
  v = _mm512_inserti32x4(v, half(2), 2);
  return _mm512_inserti32x4(v, half(3), 3);
}

// Two tokens' activation blocks side by side: [first | second].
__m512i load_token_pair(const uint8_t* first, const uint8_t* second) {
  const __m256i lo = load256(first + kActQsOffset);
  const __m256i hi = load256(second + kActQsOffset);
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// The lanes of each quarter of partial[r] summed into lane r of that
// quarter: quarter k of the result holds [row 0 .. row 3].
__m512i sum_quarter_lanes(const __m512i (&partial)[kRows]) {
  const __m512i rows01 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(partial[0], partial[1]), _mm512_unpackhi_epi32(partial[0], partial[1]));
  const __m512i rows23 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(partial[2], partial[3]), _mm512_unpackhi_epi32(partial[2], partial[3]));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(rows01, rows23), _mm512_unpackhi_epi64(rows01, rows23));
}

// Exact dot products of the four rows' weights q against qx, one per
// 128-bit quarter: quarter k of the result holds [row 0 .. row 3] partial
// sums over quarter k's 16 bytes.
__m512i quarter_sums(const __m512i (&q)[kRows], __m512i qx) {
  __m512i partial[kRows];
  for (int r = 0; r < kRows; ++r) partial[r] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[r], qx);
  return sum_quarter_lanes(partial);
}

// A 32-byte block spans two quarters: adds them, giving four slots
// [a's first block | a's second | b's first | b's second], each rows 0-3.
__m512i slot_sums(__m512i a, __m512i b) {
  const __m512i even = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  const __m512i odd = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm512_add_epi32(even, odd);
}

// A block's elements 0-15 in every quarter of `low`, 16-31 in `high`.
struct BlockHalves {
  __m512i low;
  __m512i high;
};

// Q8_0 values w in [-128, 127] go in as w + 128 (flipping the sign bit).
struct Q8_0Weights {
  static constexpr uint64_t kBlockBytes = 34;
  static constexpr int kOffsetShift = 7;  // offset 128
  // One block, in both halves.
  static __m512i load(const uint8_t* block) { return to_unsigned(_mm512_broadcast_i64x4(load_values(block))); }
  // This block and the next: [block | next].
  static __m512i load_two(const uint8_t* block) {
    const __m512i first = _mm512_castsi256_si512(load_values(block));
    return to_unsigned(_mm512_inserti64x4(first, load_values(block + kBlockBytes), 1));
  }
  static BlockHalves load_halves(const uint8_t* block) {
    return {to_unsigned(_mm512_broadcast_i32x4(load_half(block, 0))),
            to_unsigned(_mm512_broadcast_i32x4(load_half(block, 16)))};
  }

 private:
  static __m256i load_values(const uint8_t* block) { return load256(block + kWeightQsOffset); }
  static __m128i load_half(const uint8_t* block, uint64_t from) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + kWeightQsOffset + from));
  }
  static __m512i to_unsigned(__m512i q) { return _mm512_xor_si512(q, _mm512_set1_epi8(static_cast<char>(0x80))); }
};

// Blocks whose levels start as the nibbles of 16 bytes at kQsOffset:
// element j in the low nibble of byte j, j + 16 in the high one.
template <uint64_t kQsOffset, uint64_t kBlockBytes>
struct Nibbles {
  // One block, in both halves.
  static __m512i load(const uint8_t* block) { return unpack(_mm512_broadcast_i32x4(load_packed(block))); }
  // This block and the next: [block | next].
  static __m512i load_two(const uint8_t* block) {
    const __m256i both = _mm256_set_m128i(load_packed(block + kBlockBytes), load_packed(block));
    const __m512i quarters = _mm512_set_epi64(3, 2, 3, 2, 1, 0, 1, 0);
    return unpack(_mm512_permutexvar_epi64(quarters, _mm512_castsi256_si512(both)));
  }
  static BlockHalves load_halves(const uint8_t* block) {
    const __m512i packed = _mm512_broadcast_i32x4(load_packed(block));
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    return {_mm512_and_si512(packed, low4), _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4)};
  }

 private:
  static __m128i load_packed(const uint8_t* block) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + kQsOffset));
  }
  // Packed bytes in quarters [a, a, b, b] to values [a low, a high, b low,
  // b high] nibbles: elements 0-15 and 16-31 of each block.
  static __m512i unpack(__m512i packed) {
    const __m512i shifts = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
    return _mm512_and_si512(_mm512_srlv_epi64(packed, shifts), _mm512_set1_epi8(0x0f));
  }
};

// Q4_0 nibbles q in [0, 15] go in as stored; x = (q - 8) * d.
struct Q4_0Weights : Nibbles<2, 18> {
  static constexpr uint64_t kBlockBytes = 18;
  static constexpr int kOffsetShift = 3;  // offset 8
};

// Q5_0 levels q in [0, 31] (a nibble, and bit j of the 32 qh bits as the
// fifth bit of element j) go in as stored; x = (q - 16) * d.
struct Q5_0Weights {
  static constexpr uint64_t kBlockBytes = 22;
  static constexpr int kOffsetShift = 4;  // offset 16
  using Levels = Nibbles<6, kBlockBytes>;
  static __m512i load(const uint8_t* block) {
    const uint64_t bits = fifth_bits(block);
    return add_fifth_bits(Levels::load(block), bits | bits << 32);
  }
  static __m512i load_two(const uint8_t* block) {
    return add_fifth_bits(Levels::load_two(block), fifth_bits(block) | fifth_bits(block + kBlockBytes) << 32);
  }
  static BlockHalves load_halves(const uint8_t* block) {
    // Elements 0-15 (16-31) in every quarter: their 16 bits four times.
    constexpr uint64_t kFourTimes = 0x0001000100010001;
    const uint64_t bits = fifth_bits(block);
    const BlockHalves nibbles = Levels::load_halves(block);
    return {add_fifth_bits(nibbles.low, (bits & 0xffff) * kFourTimes), add_fifth_bits(nibbles.high, (bits >> 16) * kFourTimes)};
  }

 private:
  static uint64_t fifth_bits(const uint8_t* block) { return static_cast<uint32_t>(load_i32(block + 2)); }
  static __m512i add_fifth_bits(__m512i nibbles, uint64_t lanes) {
    return _mm512_mask_add_epi8(nibbles, static_cast<__mmask64>(lanes), nibbles, _mm512_set1_epi8(16));
  }
};

// Exact sums of the four rows' weight halves against the activation halves
// qx, less the weight offset times the halves' activation sums:
// [first half: rows 0-3 | second half: rows 0-3].
template <class Weights>
__m256i block_sums(const __m512i (&q)[kRows], __m512i qx, const uint8_t* first_act, const uint8_t* second_act) {
  const __m512i quarters = quarter_sums(q, qx);
  const __m256i raw = _mm512_castsi512_si256(slot_sums(quarters, quarters));
  const __m256i act_sums = _mm256_set_m128i(_mm_set1_epi32(load_i32(second_act + kActSumOffset)),
                                            _mm_set1_epi32(load_i32(first_act + kActSumOffset)));
  return _mm256_sub_epi32(raw, _mm256_slli_epi32(act_sums, Weights::kOffsetShift));
}

// dw * dx for the lanes of block_sums, given w_scales in the same layout.
__m256 block_scales(__m256 w_scales, const uint8_t* first_act, const uint8_t* second_act) {
  return _mm256_mul_ps(w_scales, _mm256_set_m128(_mm_set1_ps(load_f32(second_act)), _mm_set1_ps(load_f32(first_act))));
}

// One token (a matrix-vector product): the halves of a register hold two
// consecutive blocks instead of two tokens, and the two fmas per pair run
// in block order, so each pair sees the same operations as in tile().
template <class Weights>
void tile_one_token(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, int64_t n, float* y) {
  const uint8_t* row[kRows];
  select_rows(w, w_stride, rows, row);
  const int64_t block_count = n / kBlockElems;
  __m128 acc = _mm_setzero_ps();
  int64_t b = 0;
  for (; b + 1 < block_count; b += 2) {
    const uint64_t w_offset = b * Weights::kBlockBytes;
    const uint8_t* act = x + b * kActBlockBytes;
    __m512i q[kRows];
    for (int r = 0; r < kRows; ++r) {
      q[r] = Weights::load_two(row[r] + w_offset);
      prefetch_next_tile(row[r] + w_offset, w_stride);
    }
    const __m256i sums = block_sums<Weights>(q, load_token_pair(act, act + kActBlockBytes), act, act + kActBlockBytes);
    const __m256 scales =
        block_scales(load_row_scales(row, w_offset, w_offset + Weights::kBlockBytes), act, act + kActBlockBytes);
    const __m256 values = _mm256_cvtepi32_ps(sums);
    acc = _mm_fmadd_ps(_mm256_castps256_ps128(scales), _mm256_castps256_ps128(values), acc);
    acc = _mm_fmadd_ps(_mm256_extractf128_ps(scales, 1), _mm256_extractf128_ps(values, 1), acc);
  }
  if (b < block_count) {  // an odd last block: the token against itself
    const uint64_t w_offset = b * Weights::kBlockBytes;
    const uint8_t* act = x + b * kActBlockBytes;
    __m512i q[kRows];
    for (int r = 0; r < kRows; ++r) q[r] = Weights::load(row[r] + w_offset);
    const __m256i sums = block_sums<Weights>(q, load_token_pair(act, act), act, act);
    const __m256 scales = block_scales(load_row_scales(row, w_offset, w_offset), act, act);
    acc = _mm_fmadd_ps(_mm256_castps256_ps128(scales), _mm_cvtepi32_ps(_mm256_castsi256_si128(sums)), acc);
  }
  store_rows(acc, rows, y);
}

// Each slot's activation value at `offset` (a float or int32) in its
// quarter: [slot 0 x4 | slot 1 x4 | slot 2 x4 | slot 3 x4].
template <class Value>
Value per_slot(const uint8_t* const (&slot_act)[kSlots], uint64_t offset);

template <>
__m512i per_slot<__m512i>(const uint8_t* const (&slot_act)[kSlots], uint64_t offset) {
  __m512i v = _mm512_set1_epi32(load_i32(slot_act[0] + offset));
  for (int s = 1; s < kSlots; ++s)
    v = _mm512_mask_set1_epi32(v, __mmask16(0xf << (4 * s)), load_i32(slot_act[s] + offset));
  return v;
}

template <>
__m512 per_slot<__m512>(const uint8_t* const (&slot_act)[kSlots], uint64_t offset) {
  return _mm512_castsi512_ps(per_slot<__m512i>(slot_act, offset));
}

// The exact sums of the four rows' blocks at w_offset against two tokens'
// blocks act[0], act[1]: slots [token 0 | token 1 | token 0 | token 1].
// Forced inline, as four_slot_sums: as a call it would pass its registers
// through memory once per block.
template <class Weights>
[[gnu::always_inline]] inline __m512i two_token_sums(const uint8_t* const (&row)[kRows], uint64_t w_offset,
                                                     const uint8_t* const (&act)[kSlots]) {
  __m512i q[kRows];
  for (int r = 0; r < kRows; ++r) q[r] = Weights::load(row[r] + w_offset);
  const __m512i quarters = quarter_sums(q, load_token_pair(act[0], act[1]));
  return slot_sums(quarters, quarters);
}

// The exact sums of the four rows' blocks at w_offset against each group's
// four slots' blocks act[g][s], slot s in quarter s of raw[g]: each row's two
// halves are loaded once and go against every group's slot halves into one
// register per group, whose lanes are summed once.
template <class Weights, int kGroups>
[[gnu::always_inline]] inline void four_slot_sums(const uint8_t* const (&row)[kRows], uint64_t w_offset,
                                                  const uint8_t* const (&act)[kGroups][kSlots],
                                                  __m512i (&raw)[kGroups]) {
  __m512i x_low[kGroups], x_high[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    x_low[g] = load_slot_halves(act[g], 0);
    x_high[g] = load_slot_halves(act[g], 16);
  }
  __m512i partial[kGroups][kRows];
  for (int r = 0; r < kRows; ++r) {
    const BlockHalves w = Weights::load_halves(row[r] + w_offset);
    for (int g = 0; g < kGroups; ++g)
      partial[g][r] =
          _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w.low, x_low[g]), w.high, x_high[g]);
  }
  for (int g = 0; g < kGroups; ++g) raw[g] = sum_quarter_lanes(partial[g]);
}

// Two to four tokens, or eight: token t fills slot t % 4 of group t / 4 (a
// lone third token fills slot 3 too; with two tokens slots 2 and 3 repeat
// them without a second product). Eight tokens load each weight block once
// for both groups, and each pair sees the operations it sees in a tile of
// four.
template <class Weights, int kTokens>
void tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int64_t n, float* y,
          int64_t y_stride) {
  static_assert(kTokens >= 2 && (kTokens <= kSlots || kTokens == 2 * kSlots));
  constexpr int kGroups = kTokens > kSlots ? 2 : 1;
  const uint8_t* row[kRows];
  select_rows(w, w_stride, rows, row);
  const uint8_t* slot_token[kGroups][kSlots];
  for (int g = 0; g < kGroups; ++g)
    for (int s = 0; s < kSlots; ++s) {
      const int t = kTokens == 2 ? s % 2 : kGroups == 2 ? g * kSlots + s : (s < kTokens ? s : kTokens - 1);
      slot_token[g][s] = x + t * x_stride;
    }
  __m512 acc[kGroups];
  for (int g = 0; g < kGroups; ++g) acc[g] = _mm512_setzero_ps();

  for (int64_t b = 0; b < n / kBlockElems; ++b) {
    const uint64_t w_offset = b * Weights::kBlockBytes;
    for (int r = 0; r < kRows; ++r) prefetch_next_tile(row[r] + w_offset, w_stride);
    const uint8_t* act[kGroups][kSlots];
    for (int g = 0; g < kGroups; ++g)
      for (int s = 0; s < kSlots; ++s) act[g][s] = slot_token[g][s] + b * kActBlockBytes;
    __m512i raw[kGroups];
    if constexpr (kTokens == 2) {
      raw[0] = two_token_sums<Weights>(row, w_offset, act[0]);
    } else {
      four_slot_sums<Weights, kGroups>(row, w_offset, act, raw);
    }
    const __m512 w_scales = _mm512_broadcast_f32x4(load_row_scales(row, w_offset));
    for (int g = 0; g < kGroups; ++g) {
      const __m512i sums =
          _mm512_sub_epi32(raw[g], _mm512_slli_epi32(per_slot<__m512i>(act[g], kActSumOffset), Weights::kOffsetShift));
      const __m512 scales = _mm512_mul_ps(w_scales, per_slot<__m512>(act[g], 0));
      acc[g] = _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(sums), acc[g]);
    }
  }

  float out[kGroups][kSlots * kRows];
  for (int g = 0; g < kGroups; ++g) _mm512_storeu_ps(out[g], acc[g]);
  for (int t = 0; t < kTokens; ++t)
    std::memcpy(y + t * y_stride, out[t / kSlots] + (t % kSlots) * kRows, rows * sizeof(float));
}

// DotKernel::wide_tile: exactly kWideTileTokens tokens; other shapes leave
// y alone, as the tiles do.
template <class Weights>
void wide_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
               int64_t n, float* y, int64_t y_stride) {
  static_assert(kWideTileTokens == 2 * kSlots);
  if (rows < 1 || rows > kRows || tokens != kWideTileTokens) return;
  tile<Weights, kWideTileTokens>(w, w_stride, rows, x, x_stride, n, y, y_stride);
}

// The tile for exactly kTokens tokens (tile_for_tokens picks it): one
// token pairs consecutive blocks, more tokens fill the four slots.
template <class Weights>
struct Tile {
  template <int kTokens>
  static void run(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int64_t n,
                  float* y, int64_t y_stride) {
    if constexpr (kTokens == 1) {
      tile_one_token<Weights>(w, w_stride, rows, x, n, y);
    } else {
      tile<Weights, kTokens>(w, w_stride, rows, x, x_stride, n, y, y_stride);
    }
  }
};

}  // namespace

const Tiles kVnniTiles = {tile_for_tokens<Tile<Q8_0Weights>>, tile_for_tokens<Tile<Q4_0Weights>>,
                          tile_for_tokens<Tile<Q5_0Weights>>};
const Tiles kVnniWideTiles = {wide_tile<Q8_0Weights>, nullptr, wide_tile<Q5_0Weights>};

}  // namespace synapse::cpu::legacy
