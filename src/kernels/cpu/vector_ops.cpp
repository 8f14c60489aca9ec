// The primitives of vector_ops.h, compiled once per Highway target.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <cstring>
#include <iterator>

#include "kernels/cpu/vector_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/vector_ops.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

constexpr int kDotAccumulators = 4;  // independent FMA chains in dot

float dot_f32(const float* a, const float* b, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t step = kDotAccumulators * lanes;
  V acc[kDotAccumulators];
  for (V& v : acc) v = hn::Zero(d);
  const auto accumulate = [&](const float* a_step, const float* b_step) HWY_ATTR {
    for (int k = 0; k < kDotAccumulators; ++k)
      acc[k] = hn::MulAdd(hn::LoadU(d, a_step + k * lanes), hn::LoadU(d, b_step + k * lanes), acc[k]);
  };
  const int64_t body = n / step * step;
  for (int64_t i = 0; i < body; i += step) accumulate(a + i, b + i);
  if (body < n) {  // the tail, zero-padded to one full step
    alignas(64) float a_tail[kDotAccumulators * kMaxLanes] = {};
    alignas(64) float b_tail[kDotAccumulators * kMaxLanes] = {};
    std::memcpy(a_tail, a + body, (n - body) * sizeof(float));
    std::memcpy(b_tail, b + body, (n - body) * sizeof(float));
    accumulate(a_tail, b_tail);
  }
  V sum = acc[0];
  for (int k = 1; k < kDotAccumulators; ++k) sum = hn::Add(sum, acc[k]);
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// y = op(y) vector by vector; the last partial vector through a padded copy.
template <class Op>
HWY_INLINE void update_each_vector(float* y, const float* x, int64_t n, const Op& op) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n / lanes * lanes;
  for (int64_t i = 0; i < body; i += lanes) hn::StoreU(op(d, x ? x + i : nullptr, y + i), d, y + i);
  if (body < n) {
    const size_t tail_bytes = (n - body) * sizeof(float);
    alignas(64) float x_tail[kMaxLanes] = {};
    alignas(64) float y_tail[kMaxLanes] = {};
    if (x) std::memcpy(x_tail, x + body, tail_bytes);
    std::memcpy(y_tail, y + body, tail_bytes);
    hn::Store(op(d, x_tail, y_tail), d, y_tail);
    std::memcpy(y + body, y_tail, tail_bytes);
  }
}

void axpy_f32(float a, const float* x, float* y, int64_t n) {
  const V av = hn::Set(D(), a);
  update_each_vector(y, x, n, [&](D d, const float* xi, const float* yi) HWY_ATTR {
    return hn::MulAdd(av, hn::LoadU(d, xi), hn::LoadU(d, yi));
  });
}

void scale_f32(float a, float* y, int64_t n) {
  const V av = hn::Set(D(), a);
  update_each_vector(y, nullptr, n, [&](D d, const float*, const float* yi) HWY_ATTR {
    return hn::Mul(av, hn::LoadU(d, yi));
  });
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

VectorOps vector_ops(CpuTarget target) {
  static constexpr decltype(VectorOps::dot) kDot[] = SYNAPSE_HWY_PER_CPU_TARGET(dot_f32);
  static constexpr decltype(VectorOps::axpy) kAxpy[] = SYNAPSE_HWY_PER_CPU_TARGET(axpy_f32);
  static constexpr decltype(VectorOps::scale) kScale[] = SYNAPSE_HWY_PER_CPU_TARGET(scale_f32);
  const auto index = static_cast<size_t>(target);
  if (index >= std::size(kDot)) return {};
  return {kDot[index], kAxpy[index], kScale[index]};
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
