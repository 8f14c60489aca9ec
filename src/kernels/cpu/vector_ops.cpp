// The primitives of vector_ops.h, compiled once per Highway target.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <cstring>
#include <iterator>
#include <type_traits>

#include "encoding/blocks.h"
#include "kernels/cpu/vector_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/vector_ops.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

constexpr int kDotAccumulators = 4;  // independent FMA chains in dot

// One vector of floats from x stored as X (float, or fp16 widened in registers).
template <class X>
HWY_INLINE V load_as_float(D d, const X* x) {
  if constexpr (std::is_same_v<X, float>) {
    return hn::LoadU(d, x);
  } else {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), x));
  }
}

template <class X>
float dot_of(const float* a, const void* x_bytes, int64_t n) {
  const auto* x = static_cast<const X*>(x_bytes);
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t step = kDotAccumulators * lanes;
  V acc[kDotAccumulators];
  for (V& v : acc) v = hn::Zero(d);
  const auto accumulate = [&](const float* a_step, const X* x_step) HWY_ATTR {
    for (int k = 0; k < kDotAccumulators; ++k)
      acc[k] = hn::MulAdd(hn::LoadU(d, a_step + k * lanes), load_as_float(d, x_step + k * lanes), acc[k]);
  };
  const int64_t body = n / step * step;
  for (int64_t i = 0; i < body; i += step) accumulate(a + i, x + i);
  if (body < n) {  // the tail, zero-padded to one full step
    alignas(64) float a_tail[kDotAccumulators * kMaxLanes] = {};
    alignas(64) X x_tail[kDotAccumulators * kMaxLanes] = {};
    std::memcpy(a_tail, a + body, (n - body) * sizeof(float));
    std::memcpy(x_tail, x + body, (n - body) * sizeof(X));
    accumulate(a_tail, x_tail);
  }
  V sum = acc[0];
  for (int k = 1; k < kDotAccumulators; ++k) sum = hn::Add(sum, acc[k]);
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// y = op(y) vector by vector; the last partial vector through a padded copy.
template <class X, class Op>
HWY_INLINE void update_each_vector(float* y, const X* x, int64_t n, const Op& op) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n / lanes * lanes;
  for (int64_t i = 0; i < body; i += lanes) hn::StoreU(op(d, x ? x + i : nullptr, y + i), d, y + i);
  if (body < n) {
    alignas(64) X x_tail[kMaxLanes] = {};
    alignas(64) float y_tail[kMaxLanes] = {};
    if (x) std::memcpy(x_tail, x + body, (n - body) * sizeof(X));
    std::memcpy(y_tail, y + body, (n - body) * sizeof(float));
    hn::Store(op(d, x_tail, y_tail), d, y_tail);
    std::memcpy(y + body, y_tail, (n - body) * sizeof(float));
  }
}

template <class X>
void axpy_of(float a, const void* x, float* y, int64_t n) {
  const V av = hn::Set(D(), a);
  update_each_vector(y, static_cast<const X*>(x), n, [&](D d, const X* xi, const float* yi) HWY_ATTR {
    return hn::MulAdd(av, load_as_float(d, xi), hn::LoadU(d, yi));
  });
}

void scale_f32(float a, float* y, int64_t n) {
  const V av = hn::Set(D(), a);
  update_each_vector<float>(y, nullptr, n, [&](D d, const float*, const float* yi) HWY_ATTR {
    return hn::Mul(av, hn::LoadU(d, yi));
  });
}

// One vector of a Q8_0 block's int8 quants, as floats (not yet scaled).
HWY_INLINE V load_quants(D d, const int8_t* qs) {
  const hn::Rebind<int32_t, D> di;
  return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, D>(), qs)));
}

// Per block of 32: the block's scale times a vector at a time of its quants.
// A block is a whole number of vectors on every target (4 to 16 lanes).
float dot_q8_0(const float* a, const void* x, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto* blocks = static_cast<const blocks::Q8_0*>(x);
  V acc[2] = {hn::Zero(d), hn::Zero(d)};
  for (int64_t b = 0; b < n / blocks::kLegacyElems; ++b) {
    const V scale = hn::Set(d, blocks[b].d.get());
    const float* ab = a + b * blocks::kLegacyElems;
    for (int64_t i = 0; i < blocks::kLegacyElems; i += lanes) {
      V& chain = acc[(i / lanes) & 1];
      chain = hn::MulAdd(hn::Mul(hn::LoadU(d, ab + i), scale), load_quants(d, blocks[b].qs + i), chain);
    }
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(acc[0], acc[1])));
}

void axpy_q8_0(float a, const void* x, float* y, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto* blocks = static_cast<const blocks::Q8_0*>(x);
  for (int64_t b = 0; b < n / blocks::kLegacyElems; ++b) {
    const V scaled = hn::Set(d, a * blocks[b].d.get());
    float* yb = y + b * blocks::kLegacyElems;
    for (int64_t i = 0; i < blocks::kLegacyElems; i += lanes)
      hn::StoreU(hn::MulAdd(scaled, load_quants(d, blocks[b].qs + i), hn::LoadU(d, yb + i)), d, yb + i);
  }
}

float dot_f32(const float* a, const void* x, int64_t n) { return dot_of<float>(a, x, n); }
float dot_f16(const float* a, const void* x, int64_t n) { return dot_of<hwy::float16_t>(a, x, n); }
void axpy_f32(float a, const void* x, float* y, int64_t n) { axpy_of<float>(a, x, y, n); }
void axpy_f16(float a, const void* x, float* y, int64_t n) { axpy_of<hwy::float16_t>(a, x, y, n); }

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

VectorOps vector_ops(CpuTarget target, Encoding x_encoding) {
  using Dot = decltype(VectorOps::dot);
  using Axpy = decltype(VectorOps::axpy);
  static constexpr Dot kDotF32[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_f32);
  static constexpr Dot kDotF16[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_f16);
  static constexpr Dot kDotQ8[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_q8_0);
  static constexpr Axpy kAxpyF32[] = SYNAPSE_HWY_PER_CPU_TARGET(axpy_f32);
  static constexpr Axpy kAxpyF16[] = SYNAPSE_HWY_PER_CPU_TARGET(axpy_f16);
  static constexpr Axpy kAxpyQ8[] = SYNAPSE_HWY_PER_CPU_TARGET(axpy_q8_0);
  static constexpr decltype(VectorOps::scale) kScale[] = SYNAPSE_HWY_PER_CPU_TARGET(scale_f32);
  const auto index = static_cast<size_t>(target);
  if (index >= std::size(kScale)) return {};
  switch (x_encoding) {
    case Encoding::F32: return {kDotF32[index], kAxpyF32[index], kScale[index]};
    case Encoding::F16: return {kDotF16[index], kAxpyF16[index], kScale[index]};
    case Encoding::Q8_0: return {kDotQ8[index], kAxpyQ8[index], kScale[index]};
    default: return {};
  }
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
