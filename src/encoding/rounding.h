// Float-to-level helpers shared by the quantizers. They are written with
// plain comparisons (not std::fmin/fmax, which do not inline on x86) and
// keep NaN inputs inside the integer range.
#pragma once

#include <bit>
#include <cstdint>

namespace synapse::rounding {

// v clamped to [lo, hi]; NaN gives lo.
inline float clamp(float v, float lo, float hi) {
  const float above = v > lo ? v : lo;
  return above < hi ? above : hi;
}

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves
// the rounded integer in the low mantissa bits.
inline int nearest_int(float v) {
  const float shifted = v + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x7fffffu) - 0x400000;
}

// nearest_int(v) clamped to [lo, hi] (small integers); clamping first keeps
// huge values and NaN inside nearest_int's range.
inline int nearest_level(float v, float lo, float hi) { return nearest_int(clamp(v, lo, hi)); }

// floor(v) clamped to [0, hi], for the legacy quantizers' v + 0.5 rounding.
inline int floor_level(float v, float hi) { return static_cast<int>(clamp(v, 0.0f, hi)); }

// Round half away from zero (C's roundf) for |v| <= 127, clamped to that.
inline int round_away_level(float v) {
  const float c = clamp(v, -127.0f, 127.0f);
  const int t = static_cast<int>(c);             // truncates toward zero
  const float frac = c - static_cast<float>(t);  // exact for |c| < 2^23
  // Branch-free: the fraction is random data and would mispredict.
  return t + (frac >= 0.5f) - (frac <= -0.5f);
}

}  // namespace synapse::rounding
