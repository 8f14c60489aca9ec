// Q6_K: super-blocks of 256 elements in 16 sub-blocks of 16, each with a
// signed 8-bit scale relative to the fp16 d:
//   x = (d * scale[j]) * (q - 32),  q in [0, 63]
// The low 4 bits of q live in ql, the high 2 bits in qh. Quantization is
// ggml's algorithm (with or without an importance matrix) and writes the
// same bytes.
#include <cmath>
#include <cstring>

#include "encoding/blocks.h"
#include "encoding/codecs.h"
#include "encoding/k_quant_blocks.h"
#include "encoding/k_quant_fit.h"
#include "encoding/rounding.h"

namespace synapse::kquant {

namespace {

constexpr float kZeroScaleEps = 1e-15f;

}  // namespace

bool encode_symmetric_scales(const float* scales, blocks::Q6_K& b) {
  float max_scale = 0;
  float max_abs_scale = 0;
  for (int j = 0; j < kSymmetricSubBlocks; ++j) {
    if (std::fabs(scales[j]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kZeroScaleEps) {
    std::memset(&b, 0, sizeof b);
    return false;
  }
  // The largest-magnitude scale maps to -128, the extra negative int8 step.
  const float iscale = -128.0f / max_scale;
  b.d.set(1.0f / iscale);
  for (int j = 0; j < kSymmetricSubBlocks; ++j) {
    b.scales[j] = static_cast<int8_t>(rounding::nearest_level(iscale * scales[j], -128.0f, 127.0f));
  }
  return true;
}

// Element order within each 128-element half: for l in [0, 32), elements
// l, l+32, l+64, l+96 share qh[l] (2 bits each, in that order); l and l+64
// share ql[l] (low, high nibble), l+32 and l+96 share ql[l+32].
void pack_q6_k_levels(const int8_t* levels, blocks::Q6_K& b) {
  for (int half = 0; half < 2; ++half) {
    const int8_t* lv = levels + 128 * half;
    uint8_t* ql = b.ql + 64 * half;
    uint8_t* qh = b.qh + 32 * half;
    for (int l = 0; l < 32; ++l) {
      const int q0 = lv[l], q1 = lv[l + 32], q2 = lv[l + 64], q3 = lv[l + 96];
      ql[l] = static_cast<uint8_t>((q0 & 0x0f) | ((q2 & 0x0f) << 4));
      ql[l + 32] = static_cast<uint8_t>((q1 & 0x0f) | ((q3 & 0x0f) << 4));
      qh[l] = static_cast<uint8_t>((q0 >> 4) | ((q1 >> 4) << 2) | ((q2 >> 4) << 4) | ((q3 >> 4) << 6));
    }
  }
}

}  // namespace synapse::kquant

namespace synapse::codecs {

namespace {

constexpr int kQK = blocks::kSuperElems;
constexpr int kSub = kquant::kSymmetricSubElems;
constexpr int kNumSub = kquant::kSymmetricSubBlocks;

// ggml's quantize_row_q6_K_ref, and with `importance` (one weight per
// element, null for none) its quantize_row_q6_K_impl: the importance is the
// sub-block fit's weights as it is (the other formats scale it per element).
void quantize_q6_k_blocks(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  auto* b = static_cast<blocks::Q6_K*>(dst);
  int8_t levels[kQK];
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float scales[kNumSub];
    for (int j = 0; j < kNumSub; ++j) {
      const float* weights = importance != nullptr ? importance + kQK * i + kSub * j : nullptr;
      scales[j] =
          kquant::fit_symmetric_levels(kSub, kquant::kSymmetricNmax, src + kSub * j, weights, levels + kSub * j);
    }
    if (!kquant::encode_symmetric_scales(scales, b[i])) continue;

    // Requantize against the scales as the decoder will see them.
    const float d_stored = b[i].d.get();
    for (int j = 0; j < kNumSub; ++j) {
      const float sub_d = d_stored * b[i].scales[j];
      if (sub_d == 0.0f) continue;  // every level decodes to 0 anyway
      for (int l = 0; l < kSub; ++l) {
        const int q = rounding::nearest_level(src[kSub * j + l] / sub_d, -32.0f, 31.0f);
        levels[kSub * j + l] = static_cast<int8_t>(q + 32);
      }
    }
    kquant::pack_q6_k_levels(levels, b[i]);
  }
}

}  // namespace

void dequantize_q6_k(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const blocks::Q6_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i) {
    const float d = b[i].d.get();
    for (int half = 0; half < 2; ++half, dst += 128) {
      const uint8_t* ql = b[i].ql + 64 * half;
      const uint8_t* qh = b[i].qh + 32 * half;
      const int8_t* sc = b[i].scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int s = l / 16;  // sub-block within each run of 32 elements
        const int q0 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q1 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * sc[s] * q0;
        dst[l + 32] = d * sc[s + 2] * q1;
        dst[l + 64] = d * sc[s + 4] * q2;
        dst[l + 96] = d * sc[s + 6] * q3;
      }
    }
  }
}

void quantize_q6_k(const float* src, void* dst, int64_t n_blocks) { quantize_q6_k_blocks(src, dst, n_blocks, nullptr); }

void quantize_q6_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance) {
  quantize_q6_k_blocks(src, dst, n_blocks, importance);
}

}  // namespace synapse::codecs
