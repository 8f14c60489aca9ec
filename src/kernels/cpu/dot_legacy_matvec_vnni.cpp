// AVX-512 VNNI matrix-vector products over Q8_0 and Q4_0 weights (decode):
// eight rows per pass, two Q8_0 (four Q4_0) blocks per step, with
// everything that depends only on the activation row prepared once per
// call.
//
// The tiles (dot_legacy_vnni.cpp) spend most of their instructions on
// reading scales and on horizontal sums, not on products; a decode step
// then runs out of instructions before it runs out of memory bandwidth.
// Here, per row and step, two 32-byte loads put the qs of blocks b and
// b + 1 side by side for vpdpbusd, and the step's 16 scales of eight rows
// come from each row's first 64 bytes, where both blocks' scales lie: one
// masked word permute per two rows. Before that, a tree of word permutes
// over the scales alone, then one gather (11% faster), then the scales
// packed in general registers, four to a word (1.01-1.06x against the
// gather in decode); against those words the permutes read a single
// thread's cache-resident weights (bench/kernels "l2") 1.15x as fast,
// "model" 1.22x, "dram" 1.20x (interleaved medians, Zen 5 EPYC), while
// 1-thread decode, memory-bound there, stayed within noise (Qwen2.5-0.5B-
// shaped 1.03x, Llama-3.2-1B-shaped 1.00x). The products of eight rows are
// summed horizontally together, which takes fewer shuffles per row than
// four. The activation side (the two blocks' qs side by side, the -128 *
// sum offset that undoes the weights' +128, the two block scales) is laid
// out per step before the rows are walked.
//
// Q4_0 likewise: a 64-byte and an 8-byte load hold four blocks of a row, a
// word permute lines their qs up in the register's four quarters, whose low
// and high nibbles go against the activation blocks' two halves.
//
// Batch invariance: each (row, block) gets its exact int32 sum and then
// acc = fma(dw * dx, sum, acc) block after block from 0, as in the tiles
// and panels, so the result is bit-identical to theirs (the tests check).
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
#include "kernels/cpu/matvec_prefetch.h"
#include "kernels/cpu/simd_helpers.h"

namespace synapse::cpu::legacy {
namespace {

constexpr int kPassRows = 8;
constexpr uint64_t kQ8_0BlockBytes = 34;
constexpr uint64_t kPairBytes = 2 * kQ8_0BlockBytes;
// Steps whose activation side is prepared at a time (the columns of a
// 16384-wide row); longer rows go chunk by chunk, the accumulators kept in y.
constexpr int64_t kChunkSteps = 256;

// The activation side of one step (blocks b and b + 1).
struct alignas(64) StepActivations {
  uint8_t qs[64];      // block b's qs, then block b+1's
  int32_t offset[16];  // -128 * block sum in lanes 0 (b) and 8 (b+1)
  float dx16[16];      // the blocks' scales, each in eight lanes
};
static_assert(sizeof(StepActivations) == 192);

// Lays out steps [s0, s0 + count) of the activation row x (ActQ8Block
// blocks); a lone last block leaves the second half zero.
void prepare(const uint8_t* x, int64_t blocks, int64_t s0, int64_t count, StepActivations* out) {
  for (int64_t s = 0; s < count; ++s) {
    StepActivations& step = out[s];
    std::memset(&step, 0, sizeof(step));
    for (int half = 0; half < 2; ++half) {
      const int64_t b = 2 * (s0 + s) + half;
      if (b >= blocks) break;
      const uint8_t* block = x + b * kActBlockBytes;
      std::memcpy(step.qs + 32 * half, block + kActQsOffset, 32);
      step.offset[8 * half] = -(load_i32(block + kActSumOffset) * 128);
      for (int i = 0; i < 8; ++i) step.dx16[8 * half + i] = load_f32(block);
    }
  }
}

// The qs of blocks b and b + 1 (bytes 2-33 and 36-67 of the step) in the
// register's two halves, straight from two 32-byte loads: no shuffle of
// the weights' bytes (a word permute per row cost Zen 4 a tenth of its
// speed). A lone last block leaves the high half zero.
template <bool kLone>
[[gnu::always_inline]] inline __m512i block_pair_qs(const uint8_t* row) {
  const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2));
  if constexpr (kLone) return _mm512_zextsi256_si512(low);
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 36)), 1);
}

struct Constants {
  // Qwords of two quarter sums A, B (sum_quarter_lanes): [A.q0 B.q0 A.q2
  // B.q2] and [A.q1 B.q1 A.q3 B.q3]; their sum is [b r0-3 | b r4-7 | b+1
  // r0-3 | b+1 r4-7].
  __m512i even_quarters = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  __m512i odd_quarters = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  __m512i sign_flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Word k of a step's scales is row k % 8's for block b + k / 8: word 0
  // (b) or 17 (b + 1) of the row's first 64 bytes, an even row's from the
  // permute's first table, an odd row's from its second (index + 32).
  __m512i scale_words = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49, 17, 49, 17, 49, 17, 49, 17,
                                         32, 0, 32, 0, 32, 0, 32, 0);
};

// The step's 16 scales: blocks b (lanes 0-7) and b + 1 (8-15) of rows 0-7.
// Block b's scale is word 0 of the row's first 64 bytes and b + 1's word
// 17, so one word permute takes both of two rows' from two plain loads;
// the four pairs' words land in separate lanes. A lone last block reads
// only its own 34 bytes (the matrix may end there; masked-off bytes never
// fault) and has no b + 1.
template <bool kLone>
[[gnu::always_inline]] inline __m512 step_scales(const uint8_t* p, uint64_t w_stride, const Constants& c) {
  const auto load = [](const uint8_t* row) {
    if constexpr (kLone) return _mm512_maskz_loadu_epi8((__mmask64{1} << kQ8_0BlockBytes) - 1, row);
    return _mm512_loadu_si512(row);
  };
  __m512i words = _mm512_setzero_si512();
  for (int pair = 0; pair < kPassRows / 2; ++pair) {
    const uint8_t* even = p + 2 * pair * w_stride;
    const __mmask32 lanes = __mmask32{0x0303} << (2 * pair);
    words = _mm512_or_si512(words, _mm512_maskz_permutex2var_epi16(lanes, load(even), c.scale_words, load(even + w_stride)));
  }
  return _mm512_cvtph_ps(_mm512_castsi512_si256(words));
}

// The lanes of each quarter of p[r] summed into lane r of that quarter.
__m512i quarter_sums(const __m512i (&p)[4]) {
  const __m512i r01 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
  const __m512i r23 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(r01, r23), _mm512_unpackhi_epi64(r01, r23));
}

// One step of eight rows (row r at p + r * w_stride) against `a`, added to
// acc. A lone last block (kLone) must not read past its row: the matrix
// may end there.
template <bool kLone>
[[gnu::always_inline]] inline __m256 step(const uint8_t* p, uint64_t w_stride, const StepActivations& a, __m256 acc,
                                          const Constants& c) {
  const __m512i xq = _mm512_load_si512(a.qs);
  const __m512i offset = _mm512_load_si512(a.offset);
  __m512i sums[kPassRows];
  for (int r = 0; r < kPassRows; ++r) {
    const uint8_t* row = p + r * w_stride;
    const __m512i q = _mm512_xor_si512(block_pair_qs<kLone>(row), c.sign_flip);
    sums[r] = _mm512_dpbusd_epi32(offset, q, xq);
  }
  const __m512i a4 = quarter_sums({sums[0], sums[1], sums[2], sums[3]});
  const __m512i b4 = quarter_sums({sums[4], sums[5], sums[6], sums[7]});
  const __m512i block_sums = _mm512_add_epi32(_mm512_permutex2var_epi64(a4, c.even_quarters, b4),
                                              _mm512_permutex2var_epi64(a4, c.odd_quarters, b4));
  const __m512 values = _mm512_cvtepi32_ps(block_sums);
  const __m512 dwdx = _mm512_mul_ps(step_scales<kLone>(p, w_stride, c), _mm512_load_ps(a.dx16));
  acc = _mm256_fmadd_ps(_mm512_castps512_ps256(dwdx), _mm512_castps512_ps256(values), acc);
  if constexpr (!kLone)
    acc = _mm256_fmadd_ps(_mm512_extractf32x8_ps(dwdx, 1), _mm512_extractf32x8_ps(values, 1), acc);
  return acc;
}

// Eight rows from `row` against steps [0, steps) of act, the last one a
// lone block when `lone_last`; acc carries the rows' sums across chunks.
__m256 pass(const uint8_t* row, uint64_t w_stride, const StepActivations* act, int64_t steps, bool lone_last,
            __m256 acc, const Constants& c, const NextPassPrefetch& prefetch) {
  const int64_t full = lone_last ? steps - 1 : steps;
  for (int64_t s = 0; s < full; ++s) {
    prefetch.step(s);
    acc = step<false>(row + s * kPairBytes, w_stride, act[s], acc, c);
  }
  if (lone_last) acc = step<true>(row + full * kPairBytes, w_stride, act[full], acc, c);
  return acc;
}

// y[r] = dot(row r, x) for r < rows, a multiple of kPassRows (the caller
// takes the rest through the tiles).
void matvec_q8_0(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y) {
  const Constants c;
  const uint8_t* end = w + rows * w_stride;
  const int64_t blocks = n / kBlockElems;
  const int64_t steps = (blocks + 1) / 2;
  alignas(64) StepActivations act[kChunkSteps];
  for (int64_t s0 = 0; s0 < steps; s0 += kChunkSteps) {
    const int64_t count = std::min(kChunkSteps, steps - s0);
    const bool lone_last = s0 + count == steps && blocks % 2 == 1;
    prepare(x, blocks, s0, count, act);
    for (int64_t r = 0; r + kPassRows <= rows; r += kPassRows) {
      const uint8_t* row = w + r * w_stride + s0 * kPairBytes;
      const NextPassPrefetch prefetch(row, w_stride, kPassRows, kPairBytes, count, end, r == 0, Reread::kNextPass,
                                      MatvecWeights::kBlocks);
      const __m256 acc = s0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(y + r);
      _mm256_storeu_ps(y + r, pass(row, w_stride, act, count, lone_last, acc, c, prefetch));
    }
  }
}


// ---- Q4_0: four blocks (72 bytes) of each row per step.

constexpr uint64_t kQ4_0BlockBytes = 18;
constexpr uint64_t kQuadBytes = 4 * kQ4_0BlockBytes;
constexpr int64_t kQuadChunkSteps = 64;  // 8192 columns

// The activation side of one step (blocks 4s to 4s + 3).
struct alignas(64) QuadActivations {
  int8_t low[64];      // block k's elements 0-15 in quarter k
  int8_t high[64];     // its elements 16-31
  int32_t offset[16];  // -8 * block k's sum in lane 4k: Q4_0 levels are q - 8
  float dx[2][16];     // the scales of blocks 0 and 1 (then 2 and 3), each in 8 lanes
};

// Lays out steps [s0, s0 + count) of the activation row x; blocks past the
// row's end stay zero.
void prepare_quads(const uint8_t* x, int64_t blocks, int64_t s0, int64_t count, QuadActivations* out) {
  for (int64_t s = 0; s < count; ++s) {
    QuadActivations& step = out[s];
    std::memset(&step, 0, sizeof(step));
    for (int k = 0; k < 4; ++k) {
      const int64_t b = 4 * (s0 + s) + k;
      if (b >= blocks) break;
      const uint8_t* block = x + b * kActBlockBytes;
      std::memcpy(step.low + 16 * k, block + kActQsOffset, 16);
      std::memcpy(step.high + 16 * k, block + kActQsOffset + 16, 16);
      step.offset[4 * k] = -(load_i32(block + kActSumOffset) * 8);
      for (int i = 0; i < 8; ++i) step.dx[k / 2][8 * (k % 2) + i] = load_f32(block);
    }
  }
}

// Word indices for _mm512_permutex2var_epi16 (bit 5 picks the second
// source): pick(g, i) for word i of each group g of eight.
__m512i word_groups(int16_t (*pick)(int group, int i)) {
  alignas(64) int16_t idx[32];
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 8; ++i) idx[8 * g + i] = pick(g, i);
  return _mm512_load_si512(idx);
}

struct QuadConstants {
  // Block k's qs (words 9k + 1 to 9k + 8 of the step; words 32-35 are the
  // 8-byte load's) in quarter k.
  __m512i qs_lineup = word_groups([](int k, int i) { return static_cast<int16_t>(9 * k + 1 + i); });
  // A tree gathering the blocks' fp16 scales (word 9k) of eight rows into
  // words 8k + r: two rows, then four, then eight.
  __m512i scale_pair = word_groups([](int k, int i) { return static_cast<int16_t>(i == 0 ? 9 * k : i == 1 ? 32 + 9 * k : 0); });
  __m512i scale_quad = word_groups([](int k, int i) { return static_cast<int16_t>(i < 2 ? 8 * k + i : 32 + 8 * k + i - 2); });
  __m512i scale_oct = word_groups([](int k, int i) { return static_cast<int16_t>(i < 4 ? 8 * k + i : 32 + 8 * k + i - 4); });
  // Qwords of two quarter sums A (rows 0-3), B (rows 4-7): [blocks 0, 1]
  // and [blocks 2, 3], each block's rows 0-7 in eight lanes.
  __m512i first_blocks = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  __m512i last_blocks = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  __m512i low4 = _mm512_set1_epi8(0x0f);
};

// One step of kBlocks <= 4 blocks of eight rows (row r at p + r * w_stride)
// against `a`, added to acc; fewer than four blocks (the row's end) are
// read with a masked load, as the matrix may end there.
template <int kBlocks>
[[gnu::always_inline]] inline __m256 quad_step(const uint8_t* p, uint64_t w_stride, const QuadActivations& a,
                                               __m256 acc, const QuadConstants& c) {
  const __m512i x_low = _mm512_load_si512(a.low);
  const __m512i x_high = _mm512_load_si512(a.high);
  const __m512i offset = _mm512_load_si512(a.offset);
  __m512i raw[kPassRows], partial[kPassRows];
  for (int r = 0; r < kPassRows; ++r) {
    const uint8_t* row = p + r * w_stride;
    __m512i tail = _mm512_setzero_si512();
    if constexpr (kBlocks == 4) {
      raw[r] = _mm512_loadu_si512(row);
      tail = _mm512_castsi128_si512(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 64)));
    } else {
      raw[r] = _mm512_maskz_loadu_epi8((__mmask64{1} << (kBlocks * kQ4_0BlockBytes)) - 1, row);
    }
    const __m512i packed = _mm512_permutex2var_epi16(raw[r], c.qs_lineup, tail);
    const __m512i low = _mm512_and_si512(packed, c.low4);
    const __m512i high = _mm512_and_si512(_mm512_srli_epi16(packed, 4), c.low4);
    partial[r] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(offset, low, x_low), high, x_high);
  }
  const __m512i a4 = quarter_sums({partial[0], partial[1], partial[2], partial[3]});
  const __m512i b4 = quarter_sums({partial[4], partial[5], partial[6], partial[7]});
  const __m512 sums01 = _mm512_cvtepi32_ps(_mm512_permutex2var_epi64(a4, c.first_blocks, b4));
  const __m512 sums23 = _mm512_cvtepi32_ps(_mm512_permutex2var_epi64(a4, c.last_blocks, b4));
  __m512i pairs[4];
  for (int i = 0; i < 4; ++i) pairs[i] = _mm512_permutex2var_epi16(raw[2 * i], c.scale_pair, raw[2 * i + 1]);
  const __m512i scales = _mm512_permutex2var_epi16(_mm512_permutex2var_epi16(pairs[0], c.scale_quad, pairs[1]),
                                                   c.scale_oct,
                                                   _mm512_permutex2var_epi16(pairs[2], c.scale_quad, pairs[3]));
  const __m512 dwdx01 = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(scales)), _mm512_load_ps(a.dx[0]));
  const __m512 dwdx23 = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(scales, 1)), _mm512_load_ps(a.dx[1]));
  acc = _mm256_fmadd_ps(_mm512_castps512_ps256(dwdx01), _mm512_castps512_ps256(sums01), acc);
  if constexpr (kBlocks > 1)
    acc = _mm256_fmadd_ps(_mm512_extractf32x8_ps(dwdx01, 1), _mm512_extractf32x8_ps(sums01, 1), acc);
  if constexpr (kBlocks > 2)
    acc = _mm256_fmadd_ps(_mm512_castps512_ps256(dwdx23), _mm512_castps512_ps256(sums23), acc);
  if constexpr (kBlocks > 3)
    acc = _mm256_fmadd_ps(_mm512_extractf32x8_ps(dwdx23, 1), _mm512_extractf32x8_ps(sums23, 1), acc);
  return acc;
}

// Eight rows from `row` against steps [0, steps) of act, the last one of
// last_blocks blocks; acc carries the rows' sums across chunks.
__m256 quad_pass(const uint8_t* row, uint64_t w_stride, const QuadActivations* act, int64_t steps, int last_blocks,
                 __m256 acc, const QuadConstants& c, const NextPassPrefetch& prefetch) {
  const int64_t full = last_blocks == 4 ? steps : steps - 1;
  for (int64_t s = 0; s < full; ++s) {
    prefetch.step(s);
    acc = quad_step<4>(row + s * kQuadBytes, w_stride, act[s], acc, c);
  }
  const uint8_t* last = row + full * kQuadBytes;
  switch (last_blocks) {
    case 1: return quad_step<1>(last, w_stride, act[full], acc, c);
    case 2: return quad_step<2>(last, w_stride, act[full], acc, c);
    case 3: return quad_step<3>(last, w_stride, act[full], acc, c);
    default: return acc;
  }
}

void matvec_q4_0(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y) {
  const QuadConstants c;
  const uint8_t* end = w + rows * w_stride;
  const int64_t blocks = n / kBlockElems;
  const int64_t steps = (blocks + 3) / 4;
  alignas(64) QuadActivations act[kQuadChunkSteps];
  for (int64_t s0 = 0; s0 < steps; s0 += kQuadChunkSteps) {
    const int64_t count = std::min(kQuadChunkSteps, steps - s0);
    const int last_blocks = s0 + count == steps && blocks % 4 != 0 ? static_cast<int>(blocks % 4) : 4;
    prepare_quads(x, blocks, s0, count, act);
    for (int64_t r = 0; r + kPassRows <= rows; r += kPassRows) {
      const uint8_t* row = w + r * w_stride + s0 * kQuadBytes;
      const NextPassPrefetch prefetch(row, w_stride, kPassRows, kQuadBytes, count, end, r == 0, Reread::kNextPass,
                                      MatvecWeights::kBlocks);
      const __m256 acc = s0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(y + r);
      _mm256_storeu_ps(y + r, quad_pass(row, w_stride, act, count, last_blocks, acc, c, prefetch));
    }
  }
}

}  // namespace

const Matvecs kVnniMatvecs = {matvec_q8_0, matvec_q4_0, kPassRows};

}  // namespace synapse::cpu::legacy
