// Q4_K and Q5_K: super-blocks of 256 elements in 8 sub-blocks of 32, each
// with a 6-bit scale and 6-bit min relative to the fp16 d and dmin:
//   x = (d * scale[j]) * q - (dmin * min[j])
// with q in [0, 15] (Q4_K) or [0, 31] (Q5_K, fifth bit in qh).
// Quantization is ggml's reference algorithm and writes the same bytes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/codecs.h"
#include "encoding/k_quant_fit.h"
#include "encoding/rounding.h"

namespace synapse::codecs {

namespace {

constexpr int kQK = blocks::kSuperElems;
constexpr int kSub = 32;
constexpr int kNumSub = kQK / kSub;

// Search settings per format, as in ggml's reference quantizers.
struct FitParams {
  int nmax;
  float rmin;
  float rdelta;
  int nstep;
};
constexpr FitParams kQ4KFit{15, -1.0f, 0.1f, 20};
constexpr FitParams kQ5KFit{31, -0.5f, 0.1f, 15};

// Fits the levels of one super-block and fills d, dmin and the packed
// scales; levels[i] in [0, p.nmax] on return.
void quantize_super_block(const float* x, const FitParams& p, blocks::Half& d, blocks::Half& dmin,
                          uint8_t* packed_scales, uint8_t* levels) {
  float scales[kNumSub];
  float mins[kNumSub];
  float max_scale = 0;
  float max_min = 0;
  for (int j = 0; j < kNumSub; ++j) {
    const float* xs = x + kSub * j;
    float sum_x2 = 0;
    for (int l = 0; l < kSub; ++l) sum_x2 += xs[l] * xs[l];
    // Weight large elements more, but never ignore small ones.
    const float rms = std::sqrt(sum_x2 / kSub);
    float weights[kSub];
    for (int l = 0; l < kSub; ++l) weights[l] = rms + std::fabs(xs[l]);
    scales[j] = kquant::fit_offset_levels(kSub, p.nmax, xs, weights, levels + kSub * j, mins[j], p.rmin,
                                          p.rdelta, p.nstep);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }

  // Quantize the sub-block scales and mins to 6 bits against their maxima.
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t q_scales[kNumSub];
  uint8_t q_mins[kNumSub];
  for (int j = 0; j < kNumSub; ++j) {
    q_scales[j] = static_cast<uint8_t>(rounding::nearest_level(inv_scale * scales[j], 0.0f, 63.0f));
    q_mins[j] = static_cast<uint8_t>(rounding::nearest_level(inv_min * mins[j], 0.0f, 63.0f));
  }
  blocks::pack_scale_mins(q_scales, q_mins, packed_scales);
  d.set(max_scale / 63.0f);
  dmin.set(max_min / 63.0f);

  // Requantize against the scales as the decoder will see them.
  const float d_stored = d.get();
  const float dmin_stored = dmin.get();
  for (int j = 0; j < kNumSub; ++j) {
    const float sub_d = d_stored * q_scales[j];
    if (sub_d == 0.0f) continue;  // every level decodes to -sub_min anyway
    const float sub_min = dmin_stored * q_mins[j];
    for (int l = 0; l < kSub; ++l) {
      const int q = rounding::nearest_level((x[kSub * j + l] + sub_min) / sub_d, 0.0f, static_cast<float>(p.nmax));
      levels[kSub * j + l] = static_cast<uint8_t>(q);
    }
  }
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
    quantize_super_block(src, kQ4KFit, b[i].d, b[i].dmin, b[i].scales, levels);
    for (int c = 0; c < kNumSub / 2; ++c) {
      const uint8_t* lv = levels + 2 * kSub * c;
      for (int l = 0; l < kSub; ++l) b[i].qs[kSub * c + l] = static_cast<uint8_t>(lv[l] | (lv[l + kSub] << 4));
    }
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
    quantize_super_block(src, kQ5KFit, b[i].d, b[i].dmin, b[i].scales, levels);
    std::memset(b[i].qh, 0, sizeof b[i].qh);
    for (int c = 0; c < kNumSub / 2; ++c) {
      const uint8_t* lv = levels + 2 * kSub * c;
      for (int l = 0; l < kSub; ++l) {
        const uint8_t lo = lv[l];
        const uint8_t hi = lv[l + kSub];
        b[i].qs[kSub * c + l] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
        b[i].qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
      }
    }
  }
}

}  // namespace synapse::codecs
