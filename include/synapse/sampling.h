// Sampling parameters, with llama.cpp's defaults and flag names.
#pragma once

#include <cstdint>
#include <optional>

namespace synapse {

struct SamplingParams {
  float temp = 0.8f;             // --temp; <= 0 means greedy
  int32_t top_k = 40;            // --top-k; <= 0 means off
  float top_p = 0.95f;           // --top-p; in (0, 1], 1 means off
  float min_p = 0.05f;           // --min-p; in [0, 1], 0 means off
  float repeat_penalty = 1.0f;   // --repeat-penalty; > 0, 1 means off
  int32_t repeat_last_n = 64;    // --repeat-last-n; >= 0, 0 means off. llama.cpp's
                                 // -1 (context size) must be resolved by the caller.
  float frequency_penalty = 0.0f;  // --frequency-penalty; 0 means off
  float presence_penalty = 0.0f;   // --presence-penalty; 0 means off
  std::optional<uint32_t> seed;  // --seed; unset means a random seed
};

}  // namespace synapse
