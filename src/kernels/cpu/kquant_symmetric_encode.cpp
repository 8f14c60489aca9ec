// The Q6_K encoder of kquant_encode.h, compiled once per Highway target:
// the reference codec (encoding/codec_q6k.cpp) with its sub-block fits
// (kquant::fit_symmetric_levels) run for the block's 16 sub-blocks side by
// side, one per lane, and its requantization a vector of elements at a
// time. The block codes and the bit packing are the reference's own.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <cstdint>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/k_quant_blocks.h"
#include "kernels/cpu/kquant_encode.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/kquant_symmetric_encode.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn of this target
#include "kernels/cpu/kquant_lanes.h"

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

namespace kq = synapse::kquant;

constexpr size_t kSub = kq::kSymmetricSubElems;
constexpr size_t kGroup = kq::kSymmetricSubBlocks;  // a block's sub-blocks, fitted together
constexpr size_t kLanes = hn::MaxLanes(D());
constexpr size_t kVectors = kGroup / kLanes;
static_assert(kGroup % kLanes == 0 && kSub % kLanes == 0);

constexpr float kZeroGroupEps = 1e-15f;  // as fit_symmetric_levels
constexpr int kNmax = kq::kSymmetricNmax;
constexpr int kTrialSteps = 9;  // the grids -(nmax + 0.1 * step) / max, step = -9..9

// What fit_symmetric_levels returns for each sub-block of a block. Its
// levels are those of the best grid, recomputed on demand:
// nearest_level(grid_iscale * x, -32, 31) + 32, or all 0 for an all-zero
// sub-block (all_zero 1).
struct SymmetricFits {
  alignas(64) float scale[kGroup];
  alignas(64) float grid_iscale[kGroup];
  alignas(64) float all_zero[kGroup];
};

// Where vector k of element i of the transposed sub-blocks starts.
constexpr size_t at(size_t i, size_t k) { return i * kGroup + k * kLanes; }

// fit_symmetric_levels for the sub-blocks of xt (laid out by
// transpose_sub_blocks). Unlike the offset fits, the grids do not depend on
// one another; only the choice among them runs in trial order.
void fit_symmetric_group(const float* xt, SymmetricFits& out) {
  const D d;
  const V zero = hn::Zero(d);
  const V lo = hn::Set(d, static_cast<float>(-kNmax));
  const V hi = hn::Set(d, static_cast<float>(kNmax - 1));
  alignas(64) float wt[kSub * kGroup];   // weights x^2, laid out as xt
  alignas(64) float wxt[kSub * kGroup];  // x^2 * x

  for (size_t k = 0; k < kVectors; ++k) {
    V amax = zero, max = zero;
    for (size_t i = 0; i < kSub; ++i) {
      const V x = hn::Load(d, xt + at(i, k));
      const V ax = hn::Abs(x);
      const M larger = hn::Gt(ax, amax);
      amax = hn::IfThenElse(larger, ax, amax);
      max = hn::IfThenElse(larger, x, max);
      const V w = hn::Mul(x, x);
      hn::Store(w, d, wt + at(i, k));
      hn::Store(hn::Mul(w, x), d, wxt + at(i, k));
    }

    // sum w*x*l and sum w*l*l over the levels of one grid.
    const auto sums_for = [&](V iscale, V& sumlx, V& suml2) HWY_ATTR {
      sumlx = suml2 = zero;
      for (size_t i = 0; i < kSub; ++i) {
        const V l = nearest_level(hn::Mul(iscale, hn::Load(d, xt + at(i, k))), lo, hi);
        sumlx = hn::Add(sumlx, hn::Mul(hn::Load(d, wxt + at(i, k)), l));
        suml2 = hn::Add(suml2, hn::Mul(hn::Mul(hn::Load(d, wt + at(i, k)), l), l));
      }
    };
    V grid_iscale = hn::Div(hn::Set(d, static_cast<float>(-kNmax)), max);
    V sumlx, suml2;
    sums_for(grid_iscale, sumlx, suml2);
    V scale = hn::IfThenElseZero(hn::Gt(suml2, zero), hn::Div(sumlx, suml2));
    V best = hn::Mul(scale, sumlx);
    for (int step = -kTrialSteps; step <= kTrialSteps; ++step) {
      if (step == 0) continue;
      const V iscale = hn::Div(hn::Set(d, -(kNmax + 0.1f * step)), max);
      sums_for(iscale, sumlx, suml2);
      // A grid is better the larger sumlx^2 / suml2; strict, so the earliest wins ties.
      const M better = hn::And(hn::Gt(suml2, zero), hn::Gt(hn::Mul(sumlx, sumlx), hn::Mul(best, suml2)));
      const V this_scale = hn::Div(sumlx, suml2);
      scale = hn::IfThenElse(better, this_scale, scale);
      best = hn::IfThenElse(better, hn::Mul(this_scale, sumlx), best);
      grid_iscale = hn::IfThenElse(better, iscale, grid_iscale);
    }

    const M all_zero = hn::Lt(amax, hn::Set(d, kZeroGroupEps));
    hn::Store(hn::IfThenZeroElse(all_zero, scale), d, out.scale + k * kLanes);
    hn::Store(grid_iscale, d, out.grid_iscale + k * kLanes);
    hn::Store(hn::IfThenElseZero(all_zero, hn::Set(d, 1.0f)), d, out.all_zero + k * kLanes);
  }
}

// The block's final levels, a vector of elements at a time: requantized
// against the scale codes as the decoder will see them, or, where a
// sub-block's code decodes to 0, the fitted levels (as the reference keeps
// them).
void requantize_block(const float* x, const blocks::Q6_K& block, const SymmetricFits& fits, int8_t* levels) {
  const D d;
  const hn::Rebind<int32_t, D> di;
  const hn::Rebind<int8_t, D> di8;
  const V lo = hn::Set(d, static_cast<float>(-kNmax));
  const V hi = hn::Set(d, static_cast<float>(kNmax - 1));
  const V level_zero = hn::Set(d, static_cast<float>(kNmax));
  const auto store = [&](V l, int8_t* to) HWY_ATTR {
    hn::StoreU(hn::DemoteTo(di8, hn::ConvertTo(di, hn::Add(l, level_zero))), di8, to);
  };
  const float d_stored = block.d.get();
  for (size_t j = 0; j < kGroup; ++j) {
    const float* xs = x + kSub * j;
    int8_t* ls = levels + kSub * j;
    const float sub_d = d_stored * block.scales[j];
    if (sub_d != 0.0f) {
      const V scale = hn::Set(d, sub_d);
      for (size_t i = 0; i < kSub; i += kLanes)
        store(nearest_level(hn::Div(hn::LoadU(d, xs + i), scale), lo, hi), ls + i);
    } else if (fits.all_zero[j] != 0.0f) {
      std::memset(ls, 0, kSub);
    } else {
      const V iscale = hn::Set(d, fits.grid_iscale[j]);
      for (size_t i = 0; i < kSub; i += kLanes)
        store(nearest_level(hn::Mul(iscale, hn::LoadU(d, xs + i)), lo, hi), ls + i);
    }
  }
}

void quantize_q6_k(const float* src, void* dst, int64_t n_blocks) {
  auto* out = static_cast<blocks::Q6_K*>(dst);
  alignas(64) float xt[kSub * kGroup];
  SymmetricFits fits;
  int8_t levels[blocks::kSuperElems];
  for (int64_t b = 0; b < n_blocks; ++b, src += blocks::kSuperElems) {
    transpose_sub_blocks(src, kSub, kGroup, kGroup, xt);
    fit_symmetric_group(xt, fits);
    if (!kq::encode_symmetric_scales(fits.scale, out[b])) continue;
    requantize_block(src, out[b], fits, levels);
    kq::pack_q6_k_levels(levels, out[b]);
  }
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

codecs::QuantizeFn q6_k_encoder(CpuTarget target) {
  static constexpr codecs::QuantizeFn kEncoders[] = SYNAPSE_HWY_PER_CPU_TARGET(quantize_q6_k);
  return kEncoders[static_cast<size_t>(target)];
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
