// The float vector types shared by the Highway kernels that compile one
// body of code per CpuTarget (dot_float.cpp, vector_ops.cpp), declared in
// each target's namespace synapse::cpu::HWY_NAMESPACE.
//
// Include it right after <hwy/foreach_target.h> (hwy_targets.h comes first
// in the file). foreach_target.h re-reads the including file once per
// target, so this header has Highway's per-target guard instead of
// #pragma once: every target's namespace gets its own copy.
#if defined(SYNAPSE_KERNELS_CPU_HWY_FLOAT_VECTORS_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SYNAPSE_KERNELS_CPU_HWY_FLOAT_VECTORS_H_
#undef SYNAPSE_KERNELS_CPU_HWY_FLOAT_VECTORS_H_
#else
#define SYNAPSE_KERNELS_CPU_HWY_FLOAT_VECTORS_H_
#endif

#include <cstddef>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;  // full float vectors of this target
using V = hn::Vec<D>;

// The most floats one vector of any target holds: the size of the
// zero-padded copies through which tails go.
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target guard
