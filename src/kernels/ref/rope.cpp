#include "kernels/ref/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <variant>

#include "ir/overloaded.h"

namespace synapse::ref {
namespace {

// ggml_rope_yarn_corr_dim: the dim at which a wavelength covers n_rot turns
// of the original context.
float yarn_corr_dim(int64_t n_dims, uint32_t original_context, float n_rot, float base) {
  return static_cast<float>(n_dims) *
         std::log(static_cast<float>(original_context) / (n_rot * 2.0f * std::numbers::pi_v<float>)) /
         (2.0f * std::log(base));
}

}  // namespace

double rope_inv_freq(const RopeParams& p, int64_t pair) {
  return std::pow(static_cast<double>(p.theta), -2.0 * static_cast<double>(pair) / p.rotary_dim);
}

void rope_rotation(const RopeParams& p, int32_t position, int64_t pair, double inv_freq, float& cos_theta,
                   float& sin_theta) {
  float theta_extrap = static_cast<float>(position * inv_freq);
  if (p.freq_factors) theta_extrap /= p.freq_factors[pair];
  const float theta_interp = p.freq_scale * theta_extrap;
  float theta = theta_interp;
  float mscale = p.attn_factor;
  if (p.ext_factor != 0.0f) {
    const float y = (static_cast<float>(pair) - p.corr_low) / std::max(0.001f, p.corr_high - p.corr_low);
    const float ramp_mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
    theta = theta_interp * (1.0f - ramp_mix) + theta_extrap * ramp_mix;
    mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  }
  cos_theta = std::cos(theta) * mscale;
  sin_theta = std::sin(theta) * mscale;
}

RopeParams rope_params(const ir::Rope& rope, const float* freq_factors) {
  RopeParams p;
  p.theta = rope.theta;
  p.layout = rope.layout;
  p.head_dim = rope.head_dim;
  p.rotary_dim = rope.rotary_dim;
  std::visit(ir::Overloaded{
                 [](const ir::RopeNoScaling&) {},
                 [&](const ir::RopeLinearScaling& s) { p.freq_scale = 1.0f / s.factor; },
                 [&](const ir::RopeLlama3Scaling&) { p.freq_factors = freq_factors; },
                 [&](const ir::RopeYarnScaling& s) {
                   p.freq_scale = 1.0f / s.factor;
                   p.ext_factor = s.ext_factor;
                   p.attn_factor = s.attn_factor;
                   const float start = std::floor(yarn_corr_dim(p.rotary_dim, s.original_context, s.beta_fast, p.theta));
                   const float end = std::ceil(yarn_corr_dim(p.rotary_dim, s.original_context, s.beta_slow, p.theta));
                   p.corr_low = std::max(0.0f, start);
                   p.corr_high = std::min(static_cast<float>(p.rotary_dim - 1), end);
                 },
             },
             rope.scaling);
  return p;
}

void rope(const float* x, const int32_t* positions, int64_t tokens, int64_t width, const RopeParams& p, float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t head = 0; head < width / p.head_dim; ++head) {
      const float* src = x + t * width + head * p.head_dim;
      float* dst = y + t * width + head * p.head_dim;
      for (int64_t pair = 0; pair < p.rotary_dim / 2; ++pair) {
        float c, s;
        rope_rotation(p, positions[t], pair, rope_inv_freq(p, pair), c, s);
        rotate_pair(src, dst, p, pair, c, s);
      }
      copy_unrotated(src, dst, p);
    }
  }
}

}  // namespace synapse::ref
