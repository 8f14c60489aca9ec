// Rotary position embedding with llama.cpp's semantics (ggml_rope_ext):
// pair i of a head turns by theta_i = pos * theta^(-2i/rotary_dim), divided
// by a per-frequency factor (Llama 3), scaled (linear, YaRN).
#pragma once

#include <cstdint>

#include "ir/attributes.h"

namespace synapse::ref {

struct RopeParams {
  float theta = 10000.0f;
  ir::RopeLayout layout = ir::RopeLayout::Normal;
  int64_t head_dim = 0;
  int64_t rotary_dim = 0;
  float freq_scale = 1.0f;              // 1 / linear or YaRN factor
  const float* freq_factors = nullptr;  // [rotary_dim / 2] divisors, or none
  // YaRN: ext_factor 0 turns the ramp off; corr_low/high are the ramp's ends.
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float corr_low = 0.0f;
  float corr_high = 0.0f;
};

// The parameters an IR Rope describes; freq_factors is the decoded tensor of
// a Llama 3 scaling (ignored otherwise).
RopeParams rope_params(const ir::Rope& rope, const float* freq_factors);

// The inverse frequency of pair `pair`: theta^(-2 pair / rotary_dim), in
// double.
double rope_inv_freq(const RopeParams& params, int64_t pair);

// cos and sin of pair `pair` at `position` (ggml's rope_yarn), times the
// YaRN magnitude scale; inv_freq is rope_inv_freq(params, pair).
void rope_rotation(const RopeParams& params, int32_t position, int64_t pair, double inv_freq, float& cos_theta,
                   float& sin_theta);

// Rotates pair `pair` of one head from src into dst (dst may equal src):
// Normal layout pairs elements (2i, 2i+1), NeoX (i, i + rotary_dim/2).
inline void rotate_pair(const float* src, float* dst, const RopeParams& p, int64_t pair, float c, float s) {
  const bool normal = p.layout == ir::RopeLayout::Normal;
  const int64_t a = normal ? 2 * pair : pair;
  const int64_t b = normal ? 2 * pair + 1 : pair + p.rotary_dim / 2;
  const float x0 = src[a], x1 = src[b];
  dst[a] = x0 * c - x1 * s;
  dst[b] = x0 * s + x1 * c;
}

// Copies a head's elements past rotary_dim, which RoPE leaves as they are.
inline void copy_unrotated(const float* src, float* dst, const RopeParams& p) {
  for (int64_t i = p.rotary_dim; i < p.head_dim; ++i) dst[i] = src[i];
}

// x and y [tokens, width], width a multiple of head_dim; y may equal x.
void rope(const float* x, const int32_t* positions, int64_t tokens, int64_t width, const RopeParams& params,
          float* y);

}  // namespace synapse::ref
