// Small AVX2-level helpers shared by the SIMD dot tiles (*_avx2.cpp and
// *_vnni.cpp): unaligned loads of the scalars inside encoded blocks and a
// horizontal float sum.
//
// Everything here has internal linkage (an unnamed namespace; `inline` only
// keeps unused helpers from warning): each SIMD translation unit compiles
// its own private copy with its own flags, so the linker can never pick an
// AVX-512 copy for code that runs on an AVX2-only CPU (the ODR hazard
// described in dot_kernel.h). Keep new helpers inside the unnamed namespace.
#pragma once

#ifndef __AVX2__
#error "simd_helpers.h is for translation units compiled with -mavx2 -mf16c (see CMakeLists.txt)"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace synapse::cpu {
namespace {

// Scalars at any byte address (block fields are not aligned).
inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// An fp16 scale as a float (F16C, exact).
inline float load_f16(const uint8_t* p) { return _cvtsh_ss(load_u16(p)); }

inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// The sum of v's eight lanes, always added in the same order.
inline float lane_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace
}  // namespace synapse::cpu
