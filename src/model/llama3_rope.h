// Llama 3.1+ rope scaling: a factor per rotary frequency, stored in GGUF as
// rope_freqs.weight (llama.cpp's converter computes it from config.json's
// rope_scaling {"rope_type": "llama3", ...}; transformers'
// _compute_llama3_parameters).
#pragma once

#include <cstdint>
#include <vector>

namespace synapse {

struct Llama3RopeScaling {
  double factor = 8;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  double original_context = 8192;
};

// head_dim / 2 factors: 1 for wavelengths under original_context /
// high_freq_factor, `factor` over original_context / low_freq_factor, a
// smooth blend between.
std::vector<float> llama3_rope_factors(const Llama3RopeScaling& scaling, uint32_t head_dim, double rope_theta);

}  // namespace synapse
