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

// x and y [tokens, width], width a multiple of head_dim; y may equal x.
void rope(const float* x, const int32_t* positions, int64_t tokens, int64_t width, const RopeParams& params,
          float* y);

}  // namespace synapse::ref
