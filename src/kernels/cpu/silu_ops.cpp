// The functions of silu_ops.h, compiled once per Highway target.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <cstring>
#include <iterator>

#include "kernels/cpu/silu_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/silu_ops.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

// x / (1 + exp(-x)). Highway's Exp is valid up to 104; past 88.7 it is
// +inf, so clamping there changes nothing (x / inf is -0 for large -x).
HWY_INLINE V silu_vector(D d, V x) {
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 104.0f)));
  return hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
}

// y = op(i) vector by vector over n elements; the last partial vector
// through zero-padded copies of the inputs.
template <class Op>
HWY_INLINE void each_vector(const float* a, const float* b, float* y, int64_t n, const Op& op) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n / lanes * lanes;
  for (int64_t i = 0; i < body; i += lanes) hn::StoreU(op(d, a + i, b ? b + i : nullptr), d, y + i);
  if (body < n) {
    const size_t tail_bytes = (n - body) * sizeof(float);
    alignas(64) float a_tail[kMaxLanes] = {};
    alignas(64) float b_tail[kMaxLanes] = {};
    alignas(64) float y_tail[kMaxLanes];
    std::memcpy(a_tail, a + body, tail_bytes);
    if (b) std::memcpy(b_tail, b + body, tail_bytes);
    hn::Store(op(d, a_tail, b_tail), d, y_tail);
    std::memcpy(y + body, y_tail, tail_bytes);
  }
}

void silu_f32(const float* x, float* y, int64_t n) {
  each_vector(x, nullptr, y, n, [](D d, const float* xi, const float*) HWY_ATTR {
    return silu_vector(d, hn::LoadU(d, xi));
  });
}

void swiglu_f32(const float* gate, const float* up, float* y, int64_t n) {
  each_vector(gate, up, y, n, [](D d, const float* gi, const float* ui) HWY_ATTR {
    return hn::Mul(silu_vector(d, hn::LoadU(d, gi)), hn::LoadU(d, ui));
  });
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

SiluOps silu_ops(CpuTarget target) {
  static constexpr decltype(SiluOps::silu) kSilu[] = SYNAPSE_HWY_PER_CPU_TARGET(silu_f32);
  static constexpr decltype(SiluOps::swiglu) kSwiglu[] = SYNAPSE_HWY_PER_CPU_TARGET(swiglu_f32);
  const auto index = static_cast<size_t>(target);
  if (index >= std::size(kSilu)) return {};
  return {kSilu[index], kSwiglu[index]};
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
