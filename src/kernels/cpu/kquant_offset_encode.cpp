// The Q4_K and Q5_K encoders of kquant_encode.h, compiled once per Highway
// target: the reference codec (encoding/codec_q4k_q5k.cpp) with its
// sub-block fits (kquant::fit_offset_levels) run a vector of sub-blocks at
// a time, one per lane, and its requantization a vector of elements at a
// time. The block codes and the bit packing are the reference's own.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <algorithm>
#include <cstdint>

#include "encoding/blocks.h"
#include "encoding/k_quant_blocks.h"
#include "kernels/cpu/kquant_encode.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/kquant_offset_encode.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn of this target
#include "kernels/cpu/kquant_lanes.h"

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

namespace kq = synapse::kquant;

constexpr size_t kSub = kq::kOffsetSubElems;
constexpr size_t kLanes = hn::MaxLanes(D());
// Sub-blocks fitted together (4 blocks): two vectors on AVX-512, so that
// the long dependency chains of one (its error sums, trial after trial)
// overlap the other's work.
constexpr size_t kGroup = 32;
constexpr size_t kVectors = kGroup / kLanes;
constexpr size_t kGroupBlocks = kGroup / kq::kOffsetSubBlocks;
static_assert(kGroup % kLanes == 0 && kGroup % kq::kOffsetSubBlocks == 0 && kSub % kLanes == 0);

// What fit_offset_levels returns for each sub-block of a group. Its levels
// are those of the grid the best trial assigned, recomputed on demand:
// nearest_level(grid_iscale * (x - grid_min), 0, nmax), which is 0 for a
// constant sub-block (grid_iscale 0).
struct OffsetFits {
  alignas(64) float scale[kGroup];
  alignas(64) float offset[kGroup];
  alignas(64) float grid_iscale[kGroup];
  alignas(64) float grid_min[kGroup];
};

// Where vector k of element i of the transposed sub-blocks starts.
constexpr size_t at(size_t i, size_t k) { return i * kGroup + k * kLanes; }

// fit_offset_levels' running state for a vector of sub-blocks, one per lane.
struct OffsetFitLanes {
  V sum_w, sum_x;           // sum w and sum w*x
  V max, data_min;          // the extremes, data_min clamped to <= 0
  V min;                    // where grids start: data_min, then each better trial's offset
  V scale, best_error;      // the best grid's fit so far
  V grid_iscale, grid_min;  // the best grid
};

// For vector k of xt: the codec's weights rms + |x| (stored to wt, laid out
// as xt), the fit's sums and extremes, and its first best, the min/max grid.
HWY_INLINE OffsetFitLanes start_offset_fit(const float* xt, size_t k, V nmax, float* wt) {
  const D d;
  const V zero = hn::Zero(d);
  V sum_x2 = zero;
  for (size_t i = 0; i < kSub; ++i) {
    const V x = hn::Load(d, xt + at(i, k));
    sum_x2 = hn::Add(sum_x2, hn::Mul(x, x));
  }
  const V rms = hn::Sqrt(hn::Div(sum_x2, hn::Set(d, static_cast<float>(kSub))));
  OffsetFitLanes f;
  V min = f.max = hn::Load(d, xt + at(0, k));
  f.sum_w = f.sum_x = zero;
  for (size_t i = 0; i < kSub; ++i) {
    const V x = hn::Load(d, xt + at(i, k));
    const V w = hn::Add(rms, hn::Abs(x));
    hn::Store(w, d, wt + at(i, k));
    min = select_less(x, min);
    f.max = select_greater(x, f.max);
    f.sum_w = hn::Add(f.sum_w, w);
    f.sum_x = hn::Add(f.sum_x, hn::Mul(w, x));
  }
  f.min = f.data_min = select_less(zero, min);  // only an offset is subtracted: min <= 0

  f.grid_iscale = hn::Div(nmax, hn::Sub(f.max, f.min));
  f.grid_min = f.min;
  f.scale = hn::Div(hn::Set(d, 1.0f), f.grid_iscale);
  f.best_error = zero;
  for (size_t i = 0; i < kSub; ++i) {
    const V x = hn::Load(d, xt + at(i, k));
    const V l = nearest_level(hn::Mul(f.grid_iscale, hn::Sub(x, f.min)), zero, nmax);
    const V diff = hn::Sub(hn::Add(hn::Mul(f.scale, l), f.min), x);
    f.best_error = hn::Add(f.best_error, hn::Mul(hn::Load(d, wt + at(i, k)), hn::Mul(diff, diff)));
  }
  return f;
}

// One trial of every lane: the levels of grid numerator / (max - min)
// (kept in `trial`), their least-squares scale and offset, and their error,
// which replaces the best where it is smaller (strictly: the earliest of
// equal trials wins). The vectors interleave, so that one's dependency
// chains overlap the others' work.
HWY_INLINE void try_offset_grids(const float* xt, const float* wt, float numerator, V nmax,
                                 OffsetFitLanes (&lanes)[kVectors], float* trial) {
  const D d;
  const V zero = hn::Zero(d);
  V iscale[kVectors], sum_l[kVectors], sum_l2[kVectors], sum_xl[kVectors];
  for (size_t k = 0; k < kVectors; ++k) {
    iscale[k] = hn::Div(hn::Set(d, numerator), hn::Sub(lanes[k].max, lanes[k].min));
    sum_l[k] = sum_l2[k] = sum_xl[k] = zero;
  }
  for (size_t i = 0; i < kSub; ++i) {
    for (size_t k = 0; k < kVectors; ++k) {
      const V x = hn::Load(d, xt + at(i, k));
      const V l = nearest_level(hn::Mul(iscale[k], hn::Sub(x, lanes[k].min)), zero, nmax);
      hn::Store(l, d, trial + at(i, k));
      const V wl = hn::Mul(hn::Load(d, wt + at(i, k)), l);
      sum_l[k] = hn::Add(sum_l[k], wl);
      sum_l2[k] = hn::Add(sum_l2[k], hn::Mul(wl, l));
      sum_xl[k] = hn::Add(sum_xl[k], hn::Mul(wl, x));
    }
  }

  // Weighted least squares for x ~= scale * l + min over this assignment.
  V this_scale[kVectors], this_min[kVectors];
  M solvable[kVectors];
  bool any_solvable = false;
  for (size_t k = 0; k < kVectors; ++k) {
    const OffsetFitLanes& f = lanes[k];
    const V det = hn::Sub(hn::Mul(f.sum_w, sum_l2[k]), hn::Mul(sum_l[k], sum_l[k]));
    solvable[k] = hn::Gt(det, zero);
    any_solvable = any_solvable || !hn::AllFalse(d, solvable[k]);
    this_scale[k] = hn::Div(hn::Sub(hn::Mul(f.sum_w, sum_xl[k]), hn::Mul(f.sum_x, sum_l[k])), det);
    this_min[k] = hn::Div(hn::Sub(hn::Mul(sum_l2[k], f.sum_x), hn::Mul(sum_l[k], sum_xl[k])), det);
    const M positive = hn::Gt(this_min[k], zero);
    this_min[k] = hn::IfThenZeroElse(positive, this_min[k]);
    this_scale[k] = hn::IfThenElse(positive, hn::Div(sum_xl[k], sum_l2[k]), this_scale[k]);
  }
  if (!any_solvable) return;

  V error[kVectors];
  for (size_t k = 0; k < kVectors; ++k) error[k] = zero;
  for (size_t i = 0; i < kSub; ++i) {
    for (size_t k = 0; k < kVectors; ++k) {
      const V x = hn::Load(d, xt + at(i, k));
      const V diff = hn::Sub(hn::Add(hn::Mul(this_scale[k], hn::Load(d, trial + at(i, k))), this_min[k]), x);
      error[k] = hn::Add(error[k], hn::Mul(hn::Load(d, wt + at(i, k)), hn::Mul(diff, diff)));
    }
  }
  for (size_t k = 0; k < kVectors; ++k) {
    OffsetFitLanes& f = lanes[k];
    const M better = hn::And(solvable[k], hn::Lt(error[k], f.best_error));
    f.best_error = hn::IfThenElse(better, error[k], f.best_error);
    f.scale = hn::IfThenElse(better, this_scale[k], f.scale);
    f.grid_iscale = hn::IfThenElse(better, iscale[k], f.grid_iscale);
    f.grid_min = hn::IfThenElse(better, f.min, f.grid_min);
    f.min = hn::IfThenElse(better, this_min[k], f.min);  // the next grids start here
  }
}

// The codec's weights and fit_offset_levels for the kGroup sub-blocks of
// xt (laid out by transpose_sub_blocks). The trials run one after the
// other, as in the scalar code, because a trial that improves the error
// hands its offset to the next trial's grid.
void fit_offset_group(const float* xt, const kq::OffsetSearch& search, OffsetFits& out) {
  const D d;
  const V nmax = hn::Set(d, static_cast<float>(search.nmax));
  alignas(64) float wt[kSub * kGroup];
  alignas(64) float trial[kSub * kGroup];
  OffsetFitLanes lanes[kVectors];
  for (size_t k = 0; k < kVectors; ++k) lanes[k] = start_offset_fit(xt, k, nmax, wt);
  for (int step = 0; step <= search.nstep; ++step)
    try_offset_grids(xt, wt, search.rmin + search.rdelta * step + search.nmax, nmax, lanes, trial);

  // A constant sub-block keeps zero levels, scale 0 and its own minimum.
  for (size_t k = 0; k < kVectors; ++k) {
    const OffsetFitLanes& f = lanes[k];
    const M varying = hn::Gt(f.max, f.data_min);
    hn::Store(hn::IfThenElseZero(varying, f.scale), d, out.scale + k * kLanes);
    hn::Store(hn::Neg(hn::IfThenElse(varying, f.min, f.data_min)), d, out.offset + k * kLanes);
    hn::Store(hn::IfThenElseZero(varying, f.grid_iscale), d, out.grid_iscale + k * kLanes);
    hn::Store(hn::IfThenElseZero(varying, f.grid_min), d, out.grid_min + k * kLanes);
  }
}

// The block's final levels, a vector of elements at a time: requantized
// against the sub-block codes as the decoder will see them, or, where a
// sub-block's scale code decodes to 0, the fitted levels (as the reference
// keeps them).
void requantize_block(const float* x, const kq::OffsetCodes& codes, const OffsetFits& fits, size_t first_sub,
                      int nmax, uint8_t* levels) {
  const D d;
  const hn::Rebind<int32_t, D> di;
  const hn::Rebind<uint8_t, D> du8;
  const V zero = hn::Zero(d);
  const V top = hn::Set(d, static_cast<float>(nmax));
  const auto store = [&](V l, uint8_t* to) HWY_ATTR {
    hn::StoreU(hn::DemoteTo(du8, hn::ConvertTo(di, l)), du8, to);
  };
  for (size_t j = 0; j < kq::kOffsetSubBlocks; ++j) {
    const float* xs = x + kSub * j;
    uint8_t* ls = levels + kSub * j;
    const float sub_d = codes.d * codes.scales[j];
    if (sub_d == 0.0f) {
      const V iscale = hn::Set(d, fits.grid_iscale[first_sub + j]);
      const V min = hn::Set(d, fits.grid_min[first_sub + j]);
      for (size_t i = 0; i < kSub; i += kLanes)
        store(nearest_level(hn::Mul(iscale, hn::Sub(hn::LoadU(d, xs + i), min)), zero, top), ls + i);
    } else {
      const V scale = hn::Set(d, sub_d);
      const V offset = hn::Set(d, codes.dmin * codes.mins[j]);
      for (size_t i = 0; i < kSub; i += kLanes)
        store(nearest_level(hn::Div(hn::Add(hn::LoadU(d, xs + i), offset), scale), zero, top), ls + i);
    }
  }
}

template <class Block, void (*kPack)(const uint8_t*, Block&)>
void encode_blocks(const float* src, void* dst, int64_t n_blocks, const kq::OffsetSearch& search) {
  auto* out = static_cast<Block*>(dst);
  alignas(64) float xt[kSub * kGroup];
  OffsetFits fits;
  uint8_t levels[blocks::kSuperElems];
  for (int64_t first = 0; first < n_blocks; first += kGroupBlocks) {
    const auto count = static_cast<size_t>(std::min<int64_t>(kGroupBlocks, n_blocks - first));
    const float* x = src + first * blocks::kSuperElems;
    transpose_sub_blocks(x, kSub, count * kq::kOffsetSubBlocks, kGroup, xt);
    fit_offset_group(xt, search, fits);
    for (size_t b = 0; b < count; ++b) {
      Block& block = out[first + static_cast<int64_t>(b)];
      const size_t first_sub = b * kq::kOffsetSubBlocks;
      const kq::OffsetCodes codes = kq::encode_offset_scales(fits.scale + first_sub, fits.offset + first_sub,
                                                             block.d, block.dmin, block.scales);
      requantize_block(x + b * blocks::kSuperElems, codes, fits, first_sub, search.nmax, levels);
      kPack(levels, block);
    }
  }
}

void quantize_q4_k(const float* src, void* dst, int64_t n_blocks) {
  encode_blocks<blocks::Q4_K, kq::pack_q4_k_levels>(src, dst, n_blocks, kq::kQ4KSearch);
}

void quantize_q5_k(const float* src, void* dst, int64_t n_blocks) {
  encode_blocks<blocks::Q5_K, kq::pack_q5_k_levels>(src, dst, n_blocks, kq::kQ5KSearch);
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

codecs::QuantizeFn q4_k_encoder(CpuTarget target) {
  static constexpr codecs::QuantizeFn kEncoders[] = SYNAPSE_HWY_PER_CPU_TARGET(quantize_q4_k);
  return kEncoders[static_cast<size_t>(target)];
}

codecs::QuantizeFn q5_k_encoder(CpuTarget target) {
  static constexpr codecs::QuantizeFn kEncoders[] = SYNAPSE_HWY_PER_CPU_TARGET(quantize_q5_k);
  return kEncoders[static_cast<size_t>(target)];
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
