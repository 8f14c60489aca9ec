// Q4_K and Q5_K: super-blocks of 256 elements in 8 sub-blocks of 32, each
// with a 6-bit scale and 6-bit min relative to the fp16 d and dmin:
//   x = (d * scale[j]) * q - (dmin * min[j])
// with q in [0, 15] (Q4_K) or [0, 31] (Q5_K, fifth bit in qh).
// Quantization is ggml's algorithm (its reference one, or with an
// importance matrix its weighted one) and writes the same bytes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/codecs.h"
#include "encoding/k_quant_blocks.h"
#include "encoding/k_quant_fit.h"
#include "encoding/rounding.h"

namespace synapse::kquant {

namespace {

constexpr int kSub = kOffsetSubElems;
constexpr int kNumSub = kOffsetSubBlocks;

}  // namespace

OffsetCodes encode_offset_scales(const float* scales, const float* offsets, blocks::Half& d, blocks::Half& dmin,
                                 uint8_t* packed_scales) {
  float max_scale = 0;
  float max_min = 0;
  for (int j = 0; j < kNumSub; ++j) {
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, offsets[j]);
  }
  // Quantize the sub-block scales and mins to 6 bits against their maxima.
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  OffsetCodes codes;
  for (int j = 0; j < kNumSub; ++j) {
    codes.scales[j] = static_cast<uint8_t>(rounding::nearest_level(inv_scale * scales[j], 0.0f, 63.0f));
    codes.mins[j] = static_cast<uint8_t>(rounding::nearest_level(inv_min * offsets[j], 0.0f, 63.0f));
  }
  blocks::pack_scale_mins(codes.scales, codes.mins, packed_scales);
  d.set(max_scale / 63.0f);
  dmin.set(max_min / 63.0f);
  codes.d = d.get();
  codes.dmin = dmin.get();
  return codes;
}

void requantize_offset_levels(const float* x, const uint8_t* packed_scales, float d, float dmin, int nmax,
                              uint8_t* levels) {
  for (int j = 0; j < kNumSub; ++j) {
    uint8_t scale, min;
    blocks::unpack_scale_min(packed_scales, j, scale, min);
    const float sub_d = d * scale;
    if (sub_d == 0.0f) continue;  // every level decodes to -sub_min anyway
    const float sub_min = dmin * min;
    for (int l = 0; l < kSub; ++l) {
      const int q = rounding::nearest_level((x[kSub * j + l] + sub_min) / sub_d, 0.0f, static_cast<float>(nmax));
      levels[kSub * j + l] = static_cast<uint8_t>(q);
    }
  }
}

// Each 32 bytes of qs hold sub-block 2c in low nibbles, 2c+1 in high.
void pack_q4_k_levels(const uint8_t* levels, blocks::Q4_K& b) {
  for (int c = 0; c < kNumSub / 2; ++c) {
    const uint8_t* lv = levels + 2 * kSub * c;
    for (int l = 0; l < kSub; ++l) b.qs[kSub * c + l] = static_cast<uint8_t>(lv[l] | (lv[l + kSub] << 4));
  }
}

// As Q4_K for the low four bits; sub-block s puts its fifth bit in bit s of qh[l].
void pack_q5_k_levels(const uint8_t* levels, blocks::Q5_K& b) {
  std::memset(b.qh, 0, sizeof b.qh);
  for (int c = 0; c < kNumSub / 2; ++c) {
    const uint8_t* lv = levels + 2 * kSub * c;
    for (int l = 0; l < kSub; ++l) {
      const uint8_t lo = lv[l];
      const uint8_t hi = lv[l + kSub];
      b.qs[kSub * c + l] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
  }
}

}  // namespace synapse::kquant

namespace synapse::codecs {

namespace {

constexpr int kQK = blocks::kSuperElems;
constexpr int kSub = kquant::kOffsetSubElems;
constexpr int kNumSub = kquant::kOffsetSubBlocks;

// Fits the levels of one super-block and fills d, dmin and the packed
// scales; levels[i] in [0, search.nmax] on return.
void quantize_super_block(const float* x, const kquant::OffsetSearch& search, blocks::Half& d, blocks::Half& dmin,
                          uint8_t* packed_scales, uint8_t* levels) {
  float scales[kNumSub];
  float mins[kNumSub];
  for (int j = 0; j < kNumSub; ++j) {
    const float* xs = x + kSub * j;
    float sum_x2 = 0;
    for (int l = 0; l < kSub; ++l) sum_x2 += xs[l] * xs[l];
    // Weight large elements more, but never ignore small ones.
    const float rms = std::sqrt(sum_x2 / kSub);
    float weights[kSub];
    for (int l = 0; l < kSub; ++l) weights[l] = rms + std::fabs(xs[l]);
    scales[j] = kquant::fit_offset_levels(kSub, search.nmax, xs, weights, levels + kSub * j, mins[j], search.rmin,
                                          search.rdelta, search.nstep);
  }
  const kquant::OffsetCodes codes = kquant::encode_offset_scales(scales, mins, d, dmin, packed_scales);
  kquant::requantize_offset_levels(x, packed_scales, codes.d, codes.dmin, search.nmax, levels);
}

// ggml's quantize_row_q4_K_impl / q5_K_impl with an importance matrix: the
// sub-block fits weigh each element by its importance, and the sub-block
// scales and offsets get their 6-bit codes from a weighted fit too (instead
// of against their maxima). Q5_K caps the codes at 63, Q4_K does not (in
// ggml neither needs it unless a fitted scale is negative).
void quantize_weighted_super_block(const float* x, const float* importance, const kquant::OffsetSearch& search,
                                   bool cap_codes, blocks::Half& d, blocks::Half& dmin, uint8_t* packed_scales,
                                   uint8_t* levels) {
  float sum_x2 = 0;
  for (int l = 0; l < kQK; ++l) sum_x2 += x[l] * x[l];
  const float sigma2 = 2 * sum_x2 / kQK;
  float scales[kNumSub];
  float mins[kNumSub];
  float sub_weights[kNumSub];  // each sub-block's total weight, for its code
  for (int j = 0; j < kNumSub; ++j) {
    float weights[kSub];
    kquant::weigh_by_importance(kSub, x + kSub * j, importance + kSub * j, sigma2, weights);
    float sum_w = 0;
    for (const float w : weights) sum_w += w;
    sub_weights[j] = sum_w;
    scales[j] = kquant::fit_offset_levels(kSub, search.nmax, x + kSub * j, weights, levels + kSub * j, mins[j],
                                          search.rmin, search.rdelta, search.nstep);
  }
  uint8_t scale_codes[kNumSub];
  uint8_t min_codes[kNumSub];
  constexpr int kCodeMax = 63;
  const float d_block = kquant::fit_unsigned_levels(kNumSub, kCodeMax, scales, sub_weights, scale_codes);
  const float m_block = kquant::fit_unsigned_levels(kNumSub, kCodeMax, mins, sub_weights, min_codes);
  if (cap_codes) {
    for (int j = 0; j < kNumSub; ++j) {
      scale_codes[j] = std::min<uint8_t>(kCodeMax, scale_codes[j]);
      min_codes[j] = std::min<uint8_t>(kCodeMax, min_codes[j]);
    }
  }
  blocks::pack_scale_mins(scale_codes, min_codes, packed_scales);
  d.set(d_block);
  dmin.set(m_block);
  kquant::requantize_offset_levels(x, packed_scales, d.get(), dmin.get(), search.nmax, levels);
}

}  // namespace

void dequantize_q4_k(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q4_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i) {
    const float d = b[i].d.get();
    const float dmin = b[i].dmin.get();
    const uint8_t* q = b[i].qs;
    // Each 32 bytes of qs hold sub-block 2c in low nibbles, 2c+1 in high.
    for (int c = 0; c < kNumSub / 2; ++c, q += kSub) {
      uint8_t sc, m;
      blocks::unpack_scale_min(b[i].scales, 2 * c, sc, m);
      const float d_lo = d * sc;
      const float m_lo = dmin * m;
      blocks::unpack_scale_min(b[i].scales, 2 * c + 1, sc, m);
      const float d_hi = d * sc;
      const float m_hi = dmin * m;
      for (int l = 0; l < kSub; ++l) *dst++ = d_lo * (q[l] & 0x0f) - m_lo;
      for (int l = 0; l < kSub; ++l) *dst++ = d_hi * (q[l] >> 4) - m_hi;
    }
  }
}

void quantize_q4_k(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q4_K*>(dst);
  uint8_t levels[kQK];
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    quantize_super_block(src, kquant::kQ4KSearch, b[i].d, b[i].dmin, b[i].scales, levels);
    kquant::pack_q4_k_levels(levels, b[i]);
  }
}

void quantize_q4_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q4_K*>(dst);
  uint8_t levels[kQK];
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK, importance += kQK) {
    quantize_weighted_super_block(src, importance, kquant::kWeighted4BitSearch, false, b[i].d, b[i].dmin,
                                  b[i].scales, levels);
    kquant::pack_q4_k_levels(levels, b[i]);
  }
}

void dequantize_q5_k(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q5_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i) {
    const float d = b[i].d.get();
    const float dmin = b[i].dmin.get();
    const uint8_t* ql = b[i].qs;
    const uint8_t* qh = b[i].qh;
    // Sub-block s takes its fifth bit from bit s of qh[l].
    for (int c = 0; c < kNumSub / 2; ++c, ql += kSub) {
      const uint8_t bit_lo = static_cast<uint8_t>(1u << (2 * c));
      const uint8_t bit_hi = static_cast<uint8_t>(2u << (2 * c));
      uint8_t sc, m;
      blocks::unpack_scale_min(b[i].scales, 2 * c, sc, m);
      const float d_lo = d * sc;
      const float m_lo = dmin * m;
      blocks::unpack_scale_min(b[i].scales, 2 * c + 1, sc, m);
      const float d_hi = d * sc;
      const float m_hi = dmin * m;
      for (int l = 0; l < kSub; ++l) *dst++ = d_lo * ((ql[l] & 0x0f) + (qh[l] & bit_lo ? 16 : 0)) - m_lo;
      for (int l = 0; l < kSub; ++l) *dst++ = d_hi * ((ql[l] >> 4) + (qh[l] & bit_hi ? 16 : 0)) - m_hi;
    }
  }
}

void quantize_q5_k(const float* src, void* dst, int64_t n_blocks) {
  auto* b = static_cast<blocks::Q5_K*>(dst);
  uint8_t levels[kQK];
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    quantize_super_block(src, kquant::kQ5KSearch, b[i].d, b[i].dmin, b[i].scales, levels);
    kquant::pack_q5_k_levels(levels, b[i]);
  }
}

void quantize_q5_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q5_K*>(dst);
  uint8_t levels[kQK];
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK, importance += kQK) {
    quantize_weighted_super_block(src, importance, kquant::kWeighted5BitSearch, true, b[i].d, b[i].dmin,
                                  b[i].scales, levels);
    kquant::pack_q5_k_levels(levels, b[i]);
  }
}

}  // namespace synapse::codecs
