// Google Highway set-up shared by the kernel translation units that compile
// one body of SIMD code for several CpuTargets with hwy/foreach_target.h.
// Include it before any Highway header; after <hwy/foreach_target.h>,
// hwy_float_vectors.h declares the float vector types of each target.
//
// Only the targets a CpuTarget maps to are compiled, to keep compile time
// low: the portable one (EMU128, or SCALAR where the compiler cannot build
// EMU128), AVX2 and AVX3 (AVX-512 F/BW/VL/DQ, which Avx512Vnni reuses).
// Callers pick a target's function themselves through
// SYNAPSE_HWY_PER_CPU_TARGET rather than through Highway's dispatch, so
// tests can force each target and nothing links against libhwy.
#pragma once

// The portable target is compiled even when the baseline flags are higher.
#define HWY_COMPILE_ALL_ATTAINABLE
#define HWY_DISABLED_TARGETS (~(HWY_EMU128 | HWY_SCALAR | HWY_AVX2 | HWY_AVX3))

#include <hwy/detect_targets.h>

#if HWY_TARGETS & HWY_EMU128
#define SYNAPSE_HWY_PORTABLE(name) N_EMU128::name
#else
#define SYNAPSE_HWY_PORTABLE(name) N_SCALAR::name
#endif

// A braced list of the per-target copies of function `name` (declared in
// namespace HWY_NAMESPACE of the enclosing namespace), indexed by CpuTarget.
#if HWY_ARCH_X86
#define SYNAPSE_HWY_PER_CPU_TARGET(name) {SYNAPSE_HWY_PORTABLE(name), N_AVX2::name, N_AVX3::name, N_AVX3::name}
#else
#define SYNAPSE_HWY_PER_CPU_TARGET(name) {SYNAPSE_HWY_PORTABLE(name), nullptr, nullptr, nullptr}
#endif
