// A run compared with reference log-probabilities (--kl-divergence): per
// scored token the KL divergence KL(base || run) over the whole vocabulary,
// whether both put the same token on top, the change in the probability of
// the token that came (Δp), and both NLLs, summed as llama-perplexity does
// so that its statistics can be printed (kl_report.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "eval/perplexity.h"

namespace synapse::eval {

class KlBaseReader;

// One scored token.
struct TokenComparison {
  double nll = 0;       // the run's
  double nll_base = 0;  // the reference's
  double kld = 0;
  double p_diff = 0;    // p_run(token) - p_base(token)
  bool same_top = false;
};

// `logits`: the run's row; `base`: the reference's fp16 log-probabilities.
TokenComparison compare_row(std::span<const float> logits, std::span<const uint16_t> base, int32_t token);

struct KlSums {
  NllSums nll, nll_base;
  double sum_nll_nll_base = 0;
  NllSums kld;
  double sum_p_diff = 0, sum_p_diff2 = 0, sum_p_diff4 = 0;
  int64_t same_top = 0;
  void add(const TokenComparison& c);
  int64_t count() const { return nll.count; }
};

struct KlResult {
  KlSums sums;
  std::vector<float> kld, p_diff;  // per token, in order
};

using KlChunkObserver = std::function<void(int64_t chunk, int64_t n_chunks, double seconds, const KlSums& sums)>;

// Evaluates every chunk of the reference's tokens with `engine` (BOS in
// front when `bos`) and compares. Throws Error(InvalidValue) when the
// engine's vocabulary is not the reference's.
KlResult kl_divergence(ChunkEvaluator& engine, const KlBaseReader& base, std::optional<int32_t> bos,
                       const KlChunkObserver& observer);

}  // namespace synapse::eval
