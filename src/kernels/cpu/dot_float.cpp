// Dot-product tiles for float weights (F32, F16, BF16) times float
// activation rows, compiled once per Highway target (see hwy_targets.h).
//
// Each (row, token) pair owns kAccumulators vector accumulators: chunk c of
// the row (Lanes floats) goes to accumulator c % kAccumulators, the tail is
// a zero-padded copy run through the same step, and the pair's result is
// the lane sum of the accumulators added in order. Nothing in that sequence
// depends on the tile's shape, which is what makes tiles batch invariant.
//
// A tile is split into sub-tiles whose accumulators all fit in registers;
// rows are split before tokens, so each weight vector is loaded (and
// converted) once per tile and reused for every token.
//
// One token (decode) goes through the matrix-vector product: the one-row,
// one-token sub-tile, row after row, so the weights are read as one stream
// in address order, each row also asking for the rows a few ahead
// (matvec_prefetch.h). 1-thread decode of a Qwen2.5-0.5B-shaped F16 file
// (rows of 896) on an AMD EPYC, llama.cpp ratio in paired rounds: through
// the 4-row tiles 0.39 (four streams of under 2 KB each, too short for the
// hardware prefetcher), 8-row passes with the prefetch 0.82, one row at a
// time 0.86, with the prefetch 0.94. From DRAM (bench/kernels), 8-row
// passes stream long rows (4864) a little faster, 20.7 against 19.3 GB/s,
// short ones (1024) slower, 15.9 against 22.9.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <utility>

#include "encoding/fp16.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/matvec_prefetch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/dot_float.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

constexpr int kAccumulators = 2;  // per pair: two independent FMA chains
// Pairs per sub-tile: kAccumulators vectors each, leaving registers for the
// row and token vectors (AVX-512 has 32 vector registers, AVX2 16).
constexpr int kPairsInRegisters = HWY_TARGET == HWY_AVX3 ? 8 : 4;

template <Encoding E>
constexpr size_t kWeightBytes = E == Encoding::F32 ? sizeof(float) : sizeof(uint16_t);

// Lanes(d) weights starting at p, as floats.
template <Encoding E>
HWY_INLINE V load_weights(D d, const uint8_t* p) {
  if constexpr (E == Encoding::F32) {
    return hn::LoadU(d, reinterpret_cast<const float*>(p));
  } else if constexpr (E == Encoding::BF16) {
    const hn::Rebind<uint16_t, D> d16;
    const hn::Rebind<uint32_t, D> d32;
    return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(d32, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p)))));
  } else {
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
    // Highway's emulated fp16 conversion turns infinities and NaNs into
    // finite numbers; ours is exact.
    alignas(64) float floats[kMaxLanes];
    for (size_t i = 0; i < hn::Lanes(d); ++i) {
      uint16_t half;
      std::memcpy(&half, p + i * sizeof(half), sizeof(half));
      floats[i] = fp16_to_fp32(half);
    }
    return hn::Load(d, floats);
#else
    const hn::Rebind<hwy::float16_t, D> d16;  // F16C / AVX-512 conversion
    return hn::PromoteTo(d, hn::LoadU(d16, reinterpret_cast<const hwy::float16_t*>(p)));
#endif
  }
}

template <int R, int T>
using Accumulators = V[R][T][kAccumulators];

// What the tiles ask for ahead: nothing (the matrix-vector product asks
// for the rows ahead, NextPassPrefetch).
struct NoPrefetch {
  void step(int64_t) const {}
};

// One step: kAccumulators chunks starting at element i, chunk k into
// accumulator k of every pair.
template <Encoding E, int R, int T>
HWY_INLINE void accumulate_step(D d, const uint8_t* const (&w)[R], const float* const (&x)[T], int64_t i,
                                Accumulators<R, T>& acc) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int k = 0; k < kAccumulators; ++k) {
    const int64_t at = i + k * lanes;
    V wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load_weights<E>(d, w[r] + at * kWeightBytes<E>);
    for (int t = 0; t < T; ++t) {
      const V xv = hn::LoadU(d, x[t] + at);
      for (int r = 0; r < R; ++r) acc[r][t][k] = hn::MulAdd(wv[r], xv, acc[r][t][k]);
    }
  }
}

// The products of exactly R rows and T tokens (the DotTile contract),
// calling prefetch.step(s) before step s.
template <Encoding E, int R, int T, class Prefetch>
HWY_INLINE void dot_pairs(const uint8_t* w, uint64_t w_stride, const uint8_t* x, uint64_t x_stride, int64_t n,
                          float* y, int64_t y_stride, const Prefetch& prefetch) {
  const D d;
  const uint8_t* w_rows[R];
  const float* x_rows[T];
  for (int r = 0; r < R; ++r) w_rows[r] = w + r * w_stride;
  for (int t = 0; t < T; ++t) x_rows[t] = reinterpret_cast<const float*>(x + t * x_stride);

  Accumulators<R, T> acc;
  for (auto& row : acc)
    for (auto& pair : row)
      for (V& a : pair) a = hn::Zero(d);

  const int64_t step = kAccumulators * static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n / step * step;
  for (int64_t i = 0; i < body; i += step) {
    prefetch.step(i / step);
    accumulate_step<E>(d, w_rows, x_rows, i, acc);
  }

  if (body < n) {  // the tail, zero-padded to one full step
    const size_t tail = static_cast<size_t>(n - body);
    alignas(64) uint8_t w_tail[R][kAccumulators * kMaxLanes * kWeightBytes<E>] = {};
    alignas(64) float x_tail[T][kAccumulators * kMaxLanes] = {};
    const uint8_t* w_tail_rows[R];
    const float* x_tail_rows[T];
    for (int r = 0; r < R; ++r) {
      std::memcpy(w_tail[r], w_rows[r] + body * kWeightBytes<E>, tail * kWeightBytes<E>);
      w_tail_rows[r] = w_tail[r];
    }
    for (int t = 0; t < T; ++t) {
      std::memcpy(x_tail[t], x_rows[t] + body, tail * sizeof(float));
      x_tail_rows[t] = x_tail[t];
    }
    accumulate_step<E>(d, w_tail_rows, x_tail_rows, 0, acc);
  }

  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      V sum = acc[r][t][0];
      for (int k = 1; k < kAccumulators; ++k) sum = hn::Add(sum, acc[r][t][k]);
      y[t * y_stride + r] = hn::GetLane(hn::SumOfLanes(d, sum));
    }
  }
}

template <Encoding E, int R, int T>
HWY_NOINLINE void dot_sub_tile(const uint8_t* w, uint64_t w_stride, const uint8_t* x, uint64_t x_stride, int64_t n,
                               float* y, int64_t y_stride) {
  dot_pairs<E, R, T>(w, w_stride, x, x_stride, n, y, y_stride, NoPrefetch{});
}

using SubTile = void (*)(const uint8_t* w, uint64_t w_stride, const uint8_t* x, uint64_t x_stride, int64_t n, float* y,
                         int64_t y_stride);

// Sub-tiles indexed by (rows - 1) * kMaxTileTokens + tokens - 1; only the
// shapes that fit in registers are instantiated.
template <Encoding E, int... I>
constexpr std::array<SubTile, sizeof...(I)> make_sub_tiles(std::integer_sequence<int, I...>) {
  constexpr auto fitting = [](auto index) -> SubTile {
    constexpr int rows = decltype(index)::value / kMaxTileTokens + 1;
    constexpr int tokens = decltype(index)::value % kMaxTileTokens + 1;
    if constexpr (rows * tokens <= kPairsInRegisters) return &dot_sub_tile<E, rows, tokens>;
    return nullptr;
  };
  return {fitting(std::integral_constant<int, I>{})...};
}

template <Encoding E>
constexpr auto kSubTiles = make_sub_tiles<E>(std::make_integer_sequence<int, kMaxTileRows * kMaxTileTokens>{});

template <Encoding E>
void dot_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
              int64_t n, float* y, int64_t y_stride) {
  for (int t0 = 0; t0 < tokens; t0 += kMaxTileTokens) {
    const int sub_tokens = std::min(tokens - t0, kMaxTileTokens);
    const int rows_per_sub_tile = std::min(kMaxTileRows, kPairsInRegisters / sub_tokens);
    for (int r0 = 0; r0 < rows; r0 += rows_per_sub_tile) {
      const int sub_rows = std::min(rows - r0, rows_per_sub_tile);
      kSubTiles<E>[(sub_rows - 1) * kMaxTileTokens + sub_tokens - 1](
          w + r0 * w_stride, w_stride, x + t0 * x_stride, x_stride, n, y + t0 * y_stride + r0, y_stride);
    }
  }
}

// The DotRows contract, one row at a time.
template <Encoding E>
void matvec(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y) {
  const int64_t step = kAccumulators * static_cast<int64_t>(hn::Lanes(D()));
  const int64_t steps = n / step;  // the tail step, if any, asks for nothing
  const uint8_t* end = w + rows * w_stride;
  for (int64_t r = 0; r < rows; ++r) {
    const NextPassPrefetch prefetch(w + r * w_stride, w_stride, 1, 0, steps, end, r == 0, Reread::kNextPass,
                                    MatvecWeights::kBlocks);
    dot_pairs<E, 1, 1>(w + r * w_stride, w_stride, x, 0, n, y + r, 0, prefetch);
  }
}

}  // namespace

}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

DotKernel find_float_dot_kernel(Encoding encoding, CpuTarget target) {
  static constexpr DotTile kF32[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_tile<Encoding::F32>);
  static constexpr DotTile kF16[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_tile<Encoding::F16>);
  static constexpr DotTile kBF16[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_tile<Encoding::BF16>);
  static constexpr DotRows kF32Rows[] = SYNAPSE_HWY_PER_CPU_TARGET(matvec<Encoding::F32>);
  static constexpr DotRows kF16Rows[] = SYNAPSE_HWY_PER_CPU_TARGET(matvec<Encoding::F16>);
  static constexpr DotRows kBF16Rows[] = SYNAPSE_HWY_PER_CPU_TARGET(matvec<Encoding::BF16>);
  const auto index = static_cast<size_t>(target);
  if (index >= std::size(kF32)) return {};
  DotKernel kernel{ActivationFormat::F32};
  switch (encoding) {
    case Encoding::F32: kernel.tile = kF32[index], kernel.matvec = kF32Rows[index]; break;
    case Encoding::F16: kernel.tile = kF16[index], kernel.matvec = kF16Rows[index]; break;
    case Encoding::BF16: kernel.tile = kBF16[index], kernel.matvec = kBF16Rows[index]; break;
    default: return {};
  }
  kernel.matvec_rows = 1;
  return kernel;
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
