// Lane helpers of the SIMD K-quant encoders (kquant_offset_encode.cpp,
// kquant_symmetric_encode.cpp), which fit many sub-blocks side by side, one
// per lane. Each helper performs, in every lane, exactly the float
// operations of the scalar code it stands for, so a lane's result has the
// same bits as the scalar result (NaN included where noted).
//
// Include it right after hwy_float_vectors.h; like that header it has
// Highway's per-target guard instead of #pragma once.
#if defined(SYNAPSE_KERNELS_CPU_KQUANT_LANES_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SYNAPSE_KERNELS_CPU_KQUANT_LANES_H_
#undef SYNAPSE_KERNELS_CPU_KQUANT_LANES_H_
#else
#define SYNAPSE_KERNELS_CPU_KQUANT_LANES_H_
#endif

#include <cstddef>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

using M = hn::Mask<D>;

// a < b ? a : b, lane by lane: std::min(b, a). x86's min instruction is
// exactly this select (it returns b when either is NaN); Highway's portable
// Min is not, so other targets select.
HWY_INLINE V select_less(V a, V b) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  return hn::Min(a, b);
#else
  return hn::IfThenElse(hn::Lt(a, b), a, b);
#endif
}

// a > b ? a : b, lane by lane: std::max(b, a) (x86's max instruction).
HWY_INLINE V select_greater(V a, V b) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  return hn::Max(a, b);
#else
  return hn::IfThenElse(hn::Gt(a, b), a, b);
#endif
}

// rounding::nearest_level(v, lo, hi) as a float: the same clamp (NaN gives
// lo), then the same addition of 1.5 * 2^23, whose result holds the rounded
// integer exactly; subtracting 1.5 * 2^23 again is exact.
HWY_INLINE V nearest_level(V v, V lo, V hi) {
  const V magic = hn::Set(D(), 12582912.0f);
  return hn::Sub(hn::Add(select_less(select_greater(v, lo), hi), magic), magic);
}

// Lays `count` sub-blocks of `sub_elems` floats from x side by side:
// element i of sub-block s goes to out[i * lanes + s]; sub-blocks count to
// lanes - 1 read as zeros. (Gathers were slower than these moves.)
HWY_INLINE void transpose_sub_blocks(const float* x, size_t sub_elems, size_t count, size_t lanes, float* out) {
  for (size_t s = 0; s < lanes; ++s) {
    const bool real = s < count;
    for (size_t i = 0; i < sub_elems; ++i) out[i * lanes + s] = real ? x[s * sub_elems + i] : 0.0f;
  }
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target guard
