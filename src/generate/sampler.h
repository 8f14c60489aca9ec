// Token sampling with llama.cpp's semantics, defaults and flag names.
//
// One Sampler turns one logits row (n_vocab floats) into a token id. The
// chain runs in the order of llama.cpp's default sampler chain
// (common/common.h `common_params_sampling::samplers`, built by
// common/sampling.cpp), restricted to the stages Synapse implements:
//
//   penalties -> top-k -> top-p -> min-p -> temperature -> distribution draw
//
// (llama.cpp's default also has dry, top-n-sigma, typical-p and xtc between
// these; all are off by default there and absent here.) temp <= 0 is greedy:
// the argmax of the penalised logits, ties to the lowest id.
//
// With a fixed seed the draws reproduce llama.cpp's chain with the same
// stages and seed, token for token (checked against the build the peer
// harness pins): the same 32-bit Mersenne Twister, one uniform double per
// sample() as libstdc++ makes it, the same candidate order and the same
// float/double arithmetic. Greedy consumes no randomness.
//
// sample() does no heap allocation: every buffer is sized at construction.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "synapse/sampling.h"

namespace synapse {


class Sampler {
 public:
  // Throws synapse::Error(InvalidValue) on an out-of-range parameter or
  // n_vocab <= 0.
  Sampler(const SamplingParams& params, int32_t n_vocab);

  // Picks a token from one logits row of exactly n_vocab entries. NaN counts
  // as -inf, +inf as the largest float. Throws synapse::Error(InvalidValue)
  // on a wrong row size or when every logit is -inf or NaN. Does not accept
  // the token: call accept() with the token actually emitted.
  int32_t sample(std::span<const float> logits);

  // Records an emitted (or prompt) token for the repetition penalties.
  void accept(int32_t token);

  // For speculative sampling. The distribution sample() draws from for this
  // row (after the penalties, top-k, top-p, min-p and temperature), as
  // p[id] for every id; greedy puts all of it on its pick.
  void distribution(std::span<const float> logits, std::span<float> p);
  // A uniform draw in [0, 1) from the sampler's random sequence.
  double uniform();
  // A token drawn with probability proportional to weights[id] (>= 0, not
  // all 0).
  int32_t draw_from(std::span<const float> weights);

  // Forgets accepted tokens and restarts the random sequence: from the same
  // seed when one was given, from a fresh random seed otherwise.
  void reset();

  const SamplingParams& params() const { return params_; }
  // The seed in use, to reproduce a run that was given none.
  uint32_t seed() const { return seed_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
    float p;  // probability, filled by the stages that need it
  };

  // The candidates the stages start from: every usable token
  // (load_candidates), or only the best top_k (the best one for greedy),
  // already in rank order (load_best).
  void load(std::span<const float> logits);
  // Throws Error(InvalidValue) for a row that is not n_vocab entries.
  void check_row(std::span<const float> logits) const;
  void load_candidates(std::span<const float> logits);
  void load_best(std::span<const float> logits, size_t keep);
  float penalized(float logit, int32_t count) const;
  void apply_top_k();
  void apply_top_p();
  void apply_min_p();
  void apply_temperature();
  int32_t draw();
  void sort_prefix(size_t n);

  SamplingParams params_;
  int32_t n_vocab_;
  uint32_t seed_ = 0;
  std::mt19937 rng_;

  // Candidates still in play are candidates_[0, n_candidates_); the first
  // n_sorted_ of them are in final order (descending logit, then ascending id).
  std::vector<Candidate> candidates_;
  size_t n_candidates_ = 0;
  size_t n_sorted_ = 0;

  // The last repeat_last_n accepted tokens (a ring) and how often each token
  // occurs among them.
  std::vector<int32_t> recent_;
  size_t recent_next_ = 0;
  size_t recent_size_ = 0;
  std::vector<int32_t> recent_count_;
};

}  // namespace synapse
