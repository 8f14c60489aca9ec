// The 32-element block codecs: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
//
// Dequantization repeats ggml's arithmetic exactly (integer level converted
// to float, times the fp16 scale, plus the fp16 min). Quantization follows
// ggml's reference quantizers (the scale comes from the block's extremes and
// each element takes the nearest level) and writes the same bytes.
#include <cmath>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/codecs.h"
#include "encoding/rounding.h"

namespace synapse::codecs {

namespace {

constexpr int kQK = blocks::kLegacyElems;

// The element of largest magnitude, with its sign (the first one on ties).
inline float signed_absmax(const float* x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

inline void min_max(const float* x, float& min, float& max) {
  min = x[0];
  max = x[0];
  for (int j = 1; j < kQK; ++j) {
    min = x[j] < min ? x[j] : min;
    max = x[j] > max ? x[j] : max;
  }
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Bit 4 of each 5-bit level, element j at bit j.
inline uint32_t high_bit(uint32_t qh, int j) { return ((qh >> j) & 1u) << 4; }

}  // namespace

void dequantize_q4_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q4_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = ((b[i].qs[j] & 0x0f) - 8) * d;
      dst[j + kQK / 2] = ((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

// The signed extreme maps to level 0 (-8), so the other sign gets 7 levels.
void quantize_q4_0(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q4_0*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    const float d = signed_absmax(src) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = rounding::floor_level(src[j] * id + 8.5f, 15.0f);
      const int hi = rounding::floor_level(src[j + kQK / 2] * id + 8.5f, 15.0f);
      b[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void dequantize_q4_1(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q4_1*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    const float m = b[i].m.get();
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = (b[i].qs[j] & 0x0f) * d + m;
      dst[j + kQK / 2] = (b[i].qs[j] >> 4) * d + m;
    }
  }
}

void quantize_q4_1(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q4_1*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float min, max;
    min_max(src, min, max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    b[i].m.set(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = rounding::floor_level((src[j] - min) * id + 0.5f, 15.0f);
      const int hi = rounding::floor_level((src[j + kQK / 2] - min) * id + 0.5f, 15.0f);
      b[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void dequantize_q5_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q5_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = static_cast<int>((b[i].qs[j] & 0x0fu) | high_bit(qh, j)) - 16;
      const int hi = static_cast<int>((b[i].qs[j] >> 4) | high_bit(qh, j + kQK / 2)) - 16;
      dst[j] = lo * d;
      dst[j + kQK / 2] = hi * d;
    }
  }
}

// As Q4_0 with 32 levels: the signed extreme maps to level 0 (-16).
void quantize_q5_0(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q5_0*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    const float d = signed_absmax(src) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const uint32_t lo = rounding::floor_level(src[j] * id + 16.5f, 31.0f);
      const uint32_t hi = rounding::floor_level(src[j + kQK / 2] * id + 16.5f, 31.0f);
      b[i].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh |= (lo >> 4) << j;
      qh |= (hi >> 4) << (j + kQK / 2);
    }
    std::memcpy(b[i].qh, &qh, sizeof qh);
  }
}

void dequantize_q5_1(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q5_1*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    const float m = b[i].m.get();
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = static_cast<int>((b[i].qs[j] & 0x0fu) | high_bit(qh, j));
      const int hi = static_cast<int>((b[i].qs[j] >> 4) | high_bit(qh, j + kQK / 2));
      dst[j] = lo * d + m;
      dst[j + kQK / 2] = hi * d + m;
    }
  }
}

void quantize_q5_1(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q5_1*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float min, max;
    min_max(src, min, max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    b[i].m.set(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const uint32_t lo = rounding::floor_level((src[j] - min) * id + 0.5f, 31.0f);
      const uint32_t hi = rounding::floor_level((src[j + kQK / 2] - min) * id + 0.5f, 31.0f);
      b[i].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh |= (lo >> 4) << j;
      qh |= (hi >> 4) << (j + kQK / 2);
    }
    std::memcpy(b[i].qh, &qh, sizeof qh);
  }
}

void dequantize_q8_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q8_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    for (int j = 0; j < kQK; ++j) dst[j] = b[i].qs[j] * d;
  }
}

void quantize_q8_0(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q8_0*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fabs(src[j]) > amax ? std::fabs(src[j]) : amax;
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(rounding::round_away_level(src[j] * id));
  }
}

}  // namespace synapse::codecs
