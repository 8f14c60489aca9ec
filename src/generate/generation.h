// The generation loop shared by the commands that generate: prompt in one
// eval (chunked by the session), then one token per step, sampled.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "exec/session.h"
#include "generate/sampler.h"

namespace synapse {

struct GenerationOptions {
  int32_t n_predict = 128;           // -n: tokens to generate; < 0 means until EOS or the context fills
  // EOS, end-of-turn...: generation ends after emitting one of them.
  std::vector<int32_t> stop_tokens;
  // Called with each logits row the loop evaluates: one per prompt position
  // (when keep_prompt_logits), then one per generated token but the last.
  std::function<void(std::span<const float>)> on_logits;
  bool keep_prompt_logits = false;
  // Called with each generated token as soon as it is chosen.
  std::function<void(int32_t)> on_token;
};

// How many tokens a generation of n_predict (< 0: until the context fills)
// after `prompt` may emit at the session's position. Throws
// Error(InvalidValue) for an empty prompt, one the context cannot hold, or
// one with a token id outside the vocabulary.
int64_t generation_limit(const exec::Session& session, std::span<const int32_t> prompt, int32_t n_predict);

// Evaluates `prompt` at the session's position and generates. Returns the
// generated ids (not the prompt). Errors from the session propagate before
// any compute for a bad prompt (out-of-vocabulary id, too long for -c).
std::vector<int32_t> generate(exec::Session& session, Sampler& sampler,
                              std::span<const int32_t> prompt, const GenerationOptions& options);

}  // namespace synapse
