// IEEE binary16 (fp16) and bfloat16 conversions, bit-exact with ggml's
// portable conversions. Header-only: the codecs call these per block or per
// element, so they must inline.
#pragma once

#include <bit>
#include <cstdint>

namespace synapse {

// Exact: every fp16 value (subnormals, infinities, NaN payloads) is a float.
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float arithmetic.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

// Round to nearest, ties to even; overflow goes to infinity, NaN becomes the
// canonical quiet NaN 0x7e00 (with the sign), as ggml's portable path does.
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;
  // 65520 (0x477ff000) is halfway between 65504 (max fp16, odd mantissa) and
  // 65536, so it and everything above round to infinity.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude >= 0x38800000u) {  // normal fp16 range: >= 2^-14
    // Rebias the exponent (127 -> 15) and round away the low 13 mantissa
    // bits, ties to even, without a branch; a mantissa carry correctly bumps
    // the exponent.
    const uint32_t rebiased = magnitude - (112u << 23);
    return sign | static_cast<uint16_t>((rebiased + 0xfffu + ((rebiased >> 13) & 1u)) >> 13);
  }
  // 2^-25 is the tie between zero and the smallest subnormal: even is zero.
  if (magnitude <= 0x33000000u) return sign;
  // fp16 subnormal: count units of 2^-24 in the 24-bit significand.
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const int exponent = static_cast<int>(magnitude >> 23) - 127;  // in [-25, -15]
  const int shift = -exponent - 1;                                // in [14, 24]
  uint32_t half = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t tie = 1u << (shift - 1);
  // Rounding up from 0x3ff gives 0x400, the smallest normal: still correct.
  if (rest > tie || (rest == tie && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

inline float bf16_to_fp32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

// Round to nearest, ties to even (overflow goes to infinity); NaN keeps its
// sign and top payload bits and is forced quiet, as ggml does.
inline uint16_t fp32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace synapse
