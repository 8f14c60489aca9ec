#include "model/llama3_rope.h"

#include <cmath>
#include <numbers>

namespace synapse {

std::vector<float> llama3_rope_factors(const Llama3RopeScaling& s, uint32_t head_dim, double rope_theta) {
  const double low_freq_wavelen = s.original_context / s.low_freq_factor;
  const double high_freq_wavelen = s.original_context / s.high_freq_factor;
  std::vector<float> factors;
  for (uint32_t i = 0; i < head_dim; i += 2) {
    const double freq = 1.0 / std::pow(rope_theta, double(i) / head_dim);
    const double wavelen = 2 * std::numbers::pi / freq;
    double f = s.factor;
    if (wavelen < high_freq_wavelen) {
      f = 1;
    } else if (wavelen <= low_freq_wavelen) {
      const double smooth =
          (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f = 1 / ((1 - smooth) / s.factor + smooth);
    }
    factors.push_back(static_cast<float>(f));
  }
  return factors;
}

}  // namespace synapse
