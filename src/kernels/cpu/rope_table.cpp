#include "kernels/cpu/rope_table.h"

#include <algorithm>

namespace synapse::cpu {
namespace {

// Whether a and b turn every pair by the same angles (the layout and head
// size only say which elements a pair is).
bool same_frequencies(const ref::RopeParams& a, const ref::RopeParams& b) {
  return a.theta == b.theta && a.rotary_dim == b.rotary_dim && a.freq_scale == b.freq_scale &&
         a.freq_factors == b.freq_factors && a.ext_factor == b.ext_factor && a.attn_factor == b.attn_factor &&
         a.corr_low == b.corr_low && a.corr_high == b.corr_high;
}

}  // namespace

RopeTable::RopeTable(int64_t max_tokens, int64_t max_pairs)
    : max_tokens_(max_tokens),
      max_pairs_(max_pairs),
      inv_freq_(static_cast<size_t>(max_pairs)),
      positions_(static_cast<size_t>(max_tokens)),
      cos_(static_cast<size_t>(max_tokens * max_pairs)),
      sin_(static_cast<size_t>(max_tokens * max_pairs)) {}

void RopeTable::prepare(const ref::RopeParams& params, const int32_t* positions, int64_t tokens) {
  const int64_t pairs = params.rotary_dim / 2;
  if (!have_freqs_ || !same_frequencies(params, params_)) {
    for (int64_t pair = 0; pair < pairs; ++pair)
      inv_freq_[static_cast<size_t>(pair)] = ref::rope_inv_freq(params, pair);
    params_ = params;
    have_freqs_ = true;
    tokens_ = -1;
  }
  if (tokens == tokens_ && std::equal(positions, positions + tokens, positions_.begin())) return;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const size_t at = static_cast<size_t>(t * max_pairs_ + pair);
      ref::rope_rotation(params, positions[t], pair, inv_freq_[static_cast<size_t>(pair)], cos_[at], sin_[at]);
    }
  }
  std::copy(positions, positions + tokens, positions_.begin());
  tokens_ = tokens;
}

void RopeTable::apply(const float* x, int64_t begin, int64_t end, int64_t width, const ref::RopeParams& p,
                      float* y) const {
  const int64_t pairs = p.rotary_dim / 2;
  for (int64_t t = begin; t < end; ++t) {
    const float* cos_t = cos_.data() + t * max_pairs_;
    const float* sin_t = sin_.data() + t * max_pairs_;
    for (int64_t head = 0; head < width / p.head_dim; ++head) {
      const float* src = x + t * width + head * p.head_dim;
      float* dst = y + t * width + head * p.head_dim;
      for (int64_t pair = 0; pair < pairs; ++pair) ref::rotate_pair(src, dst, p, pair, cos_t[pair], sin_t[pair]);
      ref::copy_unrotated(src, dst, p);
    }
  }
}

}  // namespace synapse::cpu
