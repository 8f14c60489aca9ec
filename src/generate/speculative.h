// Speculative decoding (SPEC §10): a drafter proposes the next tokens, the
// target evaluates the last committed token and every drafted one in one
// batched pass, and keeps the drafts its own choice agrees with, plus the
// token it picks after them. The kernels are batch-invariant, so a row of
// the batched pass has the bits the token's own decode step would have:
// greedy output is the target's greedy output, token for token
// (GreedyTargetEquivalent), whatever the drafter proposes. Sampled output
// (temp > 0) follows the speculative sampling rule (Leviathan et al. 2023):
// a draft d drawn from q stands with probability min(1, p(d) / q(d)), else
// the token is drawn from max(0, p - q) renormalized, so every token has
// the target's distribution p.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/session.h"
#include "generate/generation.h"
#include "generate/sampler.h"

namespace synapse {

// A source of draft tokens.
class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `max` tokens that may follow `context`: every committed token,
  // the prompt and what was generated so far.
  virtual std::vector<int32_t> draft(std::span<const int32_t> context, int max) = 0;
  // The distributions the last draft's tokens were drawn from, [drafts,
  // vocab]; empty when each was certain (a point mass), as greedy and
  // lookup drafts are.
  virtual std::span<const float> draft_distributions() const { return {}; }
};

// Prompt lookup (llama.cpp's lookup decoding, no draft model): the tokens
// that followed an earlier occurrence of the context's last n tokens, for
// the largest n <= max_ngram that occurs: the latest occurrence that is
// followed by `max` tokens, else the earliest.
class NgramDrafter : public Drafter {
 public:
  explicit NgramDrafter(int max_ngram);
  std::vector<int32_t> draft(std::span<const int32_t> context, int max) override;

 private:
  int max_ngram_;
};

struct SpeculativeOptions {
  int draft_max = 16;  // --draft-max: tokens drafted per target pass
  int draft_min = 0;   // --draft-min: fewer drafted tokens are not verified (a plain step instead)
};

struct SpeculativeStats {
  int64_t drafted = 0;        // tokens the drafter proposed and the target verified
  int64_t accepted = 0;       // drafted tokens the target kept
  int64_t target_passes = 0;  // target evals after the prompt
  double acceptance_rate() const { return drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0; }
};

// generate() with drafts: with a greedy sampler (temp <= 0) the same ids as
// generate(); sampled, the same distribution. The session must plan
// draft_max + 1 logits rows (SessionOptions::logits_rows). on_logits is not
// supported (Error(Unsupported)).
std::vector<int32_t> generate_speculative(exec::Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                                          const GenerationOptions& options, Drafter& drafter,
                                          const SpeculativeOptions& speculative, SpeculativeStats& stats);

}  // namespace synapse
