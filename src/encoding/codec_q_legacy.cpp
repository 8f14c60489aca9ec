// The 32-element block codecs: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
//
// Dequantization repeats ggml's arithmetic exactly (integer level converted
// to float, times the fp16 scale, plus the fp16 min). Quantization follows
// ggml's reference quantizers (the scale comes from the block's extremes and
// each element takes the nearest level) and writes the same bytes; with an
// importance matrix (Q4_0, Q4_1, Q5_0, Q5_1) ggml's weighted ones, which fit
// each block's scale (and offset) by weighted least squares.
#include <cmath>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/codecs.h"
#include "encoding/k_quant_blocks.h"
#include "encoding/k_quant_fit.h"
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

// A block's levels into its bytes: element j's low four bits in the low
// nibble of qs[j], element j + 16's in the high one; for 5-bit levels the
// fifth bit of element j in bit j of qh.
inline void pack_nibbles(const uint8_t* levels, uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j)
    qs[j] = static_cast<uint8_t>((levels[j] & 0x0f) | ((levels[j + kQK / 2] & 0x0f) << 4));
}

inline void pack_5bit_levels(const uint8_t* levels, uint8_t* qs, uint8_t* qh_bytes) {
  pack_nibbles(levels, qs);
  uint32_t qh = 0;
  for (int j = 0; j < kQK; ++j) qh |= static_cast<uint32_t>(levels[j] >> 4) << j;
  std::memcpy(qh_bytes, &qh, sizeof qh);
}

// The weighted encoders' sigma2: the mean square of the whole row.
float row_mean_square(const float* x, int64_t n) {
  float sum_x2 = 0;
  for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
  return sum_x2 / static_cast<float>(n);
}

// ggml's quantize_row_q4_0_impl / q5_0_impl: each block's levels from the
// symmetric fit with importance weights; levels in [0, 2 * nmax - 1]
// decode as (level - nmax) * d.
// store(block, d, levels) writes a block.
template <typename Store>
void quantize_symmetric_weighted(const float* src, int64_t n_blocks, const float* importance, int nmax,
                                 Store store) {
  const float sigma2 = row_mean_square(src, n_blocks * kQK);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK, importance += kQK) {
    float weights[kQK];
    kquant::weigh_by_importance(kQK, src, importance, sigma2, weights);
    int8_t fitted[kQK];
    const float d = kquant::fit_symmetric_levels(kQK, nmax, src, weights, fitted);
    uint8_t levels[kQK];
    for (int j = 0; j < kQK; ++j) levels[j] = static_cast<uint8_t>(fitted[j]);
    store(i, d, levels);
  }
}

// ggml's quantize_row_q4_1_impl / q5_1_impl: each block's levels, scale and
// offset from the weighted offset fit (no requantization after it);
// store(block, d, m, levels) writes a block.
template <typename Store>
void quantize_offset_weighted(const float* src, int64_t n_blocks, const float* importance,
                              const kquant::OffsetSearch& search, Store store) {
  const float sigma2 = row_mean_square(src, n_blocks * kQK);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK, importance += kQK) {
    float weights[kQK];
    kquant::weigh_by_importance(kQK, src, importance, sigma2, weights);
    uint8_t levels[kQK];
    float offset;
    const float d = kquant::fit_offset_levels(kQK, search.nmax, src, weights, levels, offset, search.rmin,
                                              search.rdelta, search.nstep);
    store(i, d, -offset, levels);
  }
}

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
    uint8_t levels[kQK];
    for (int j = 0; j < kQK; ++j) levels[j] = static_cast<uint8_t>(rounding::floor_level(src[j] * id + 8.5f, 15.0f));
    pack_nibbles(levels, b[i].qs);
  }
}

void quantize_q4_0_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q4_0*>(dst);
  quantize_symmetric_weighted(src, n_blocks, importance, 8, [b](int64_t i, float d, const uint8_t* levels) {
    b[i].d.set(d);
    pack_nibbles(levels, b[i].qs);
  });
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
    uint8_t levels[kQK];
    for (int j = 0; j < kQK; ++j)
      levels[j] = static_cast<uint8_t>(rounding::floor_level((src[j] - min) * id + 0.5f, 15.0f));
    pack_nibbles(levels, b[i].qs);
  }
}

void quantize_q4_1_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q4_1*>(dst);
  quantize_offset_weighted(src, n_blocks, importance, kquant::kWeighted4BitSearch,
                           [b](int64_t i, float d, float m, const uint8_t* levels) {
                             b[i].d.set(d);
                             b[i].m.set(m);
                             pack_nibbles(levels, b[i].qs);
                           });
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
    uint8_t levels[kQK];
    for (int j = 0; j < kQK; ++j) levels[j] = static_cast<uint8_t>(rounding::floor_level(src[j] * id + 16.5f, 31.0f));
    pack_5bit_levels(levels, b[i].qs, b[i].qh);
  }
}

void quantize_q5_0_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q5_0*>(dst);
  quantize_symmetric_weighted(src, n_blocks, importance, 16, [b](int64_t i, float d, const uint8_t* levels) {
    b[i].d.set(d);
    pack_5bit_levels(levels, b[i].qs, b[i].qh);
  });
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
    uint8_t levels[kQK];
    for (int j = 0; j < kQK; ++j)
      levels[j] = static_cast<uint8_t>(rounding::floor_level((src[j] - min) * id + 0.5f, 31.0f));
    pack_5bit_levels(levels, b[i].qs, b[i].qh);
  }
}

void quantize_q5_1_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q5_1*>(dst);
  quantize_offset_weighted(src, n_blocks, importance, kquant::kWeighted5BitSearch,
                           [b](int64_t i, float d, float m, const uint8_t* levels) {
                             b[i].d.set(d);
                             b[i].m.set(m);
                             pack_5bit_levels(levels, b[i].qs, b[i].qh);
                           });
}

void dequantize_q8_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q8_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const float d = b[i].d.get();
    for (int j = 0; j < kQK; ++j) dst[j] = b[i].qs[j] * d;
  }
}

// Written so the compiler can vectorize it (synth encodes whole models with
// it): the block is copied to a local array, which the int8 stores cannot
// alias, and the largest magnitude is kept in independent lanes instead of
// one serial chain. Max is order-independent and each comparison skips NaN
// as a single chain would, so the bytes are those of the plain loop.
void quantize_q8_0(const float* src, void* dst, int64_t n_blocks) {
  constexpr int kLanes = 8;
  auto* b = static_cast<blocks::Q8_0*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float x[kQK];
    std::memcpy(x, src, sizeof x);
    float lane_max[kLanes] = {};
    for (int j = 0; j < kQK; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        const float a = std::fabs(x[j + l]);
        lane_max[l] = a > lane_max[l] ? a : lane_max[l];
      }
    }
    float amax = 0.0f;
    for (const float m : lane_max) amax = m > amax ? m : amax;
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d.set(d);
    int8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(rounding::round_away_level(x[j] * id));
    std::memcpy(b[i].qs, q, sizeof q);
  }
}

}  // namespace synapse::codecs
