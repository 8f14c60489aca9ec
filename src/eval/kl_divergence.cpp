#include "eval/kl_divergence.h"

#include <cmath>
#include <string>

#include "encoding/fp16.h"
#include "eval/kl_base_file.h"
#include "eval/token_scores.h"
#include "synapse/error.h"

namespace synapse::eval {

TokenComparison compare_row(std::span<const float> logits, std::span<const uint16_t> base, int32_t token) {
  const RowScore run = score_row(logits, token);
  // The run's log-probabilities are logits - shift.
  const double shift = run.nll + static_cast<double>(logits[static_cast<size_t>(token)]);
  TokenComparison c;
  c.nll = run.nll;
  c.nll_base = -static_cast<double>(fp16_to_fp32(base[static_cast<size_t>(token)]));
  int32_t top_base = 0;
  float top_base_value = fp16_to_fp32(base[0]);
  for (size_t i = 0; i < base.size(); ++i) {
    const float log_p_base = fp16_to_fp32(base[i]);
    if (log_p_base > top_base_value) top_base_value = log_p_base, top_base = static_cast<int32_t>(i);
    // exp(log p) underflows to 0 for -inf and far below: no contribution.
    const double p_base = std::exp(static_cast<double>(log_p_base));
    if (p_base > 0) c.kld += p_base * (log_p_base - (static_cast<double>(logits[i]) - shift));
  }
  c.same_top = run.argmax == top_base;
  c.p_diff = std::exp(-c.nll) - std::exp(-c.nll_base);
  return c;
}

void KlSums::add(const TokenComparison& c) {
  nll.add(c.nll);
  nll_base.add(c.nll_base);
  sum_nll_nll_base += c.nll * c.nll_base;
  kld.add(c.kld);
  const double d2 = c.p_diff * c.p_diff;
  sum_p_diff += c.p_diff;
  sum_p_diff2 += d2;
  sum_p_diff4 += d2 * d2;
  same_top += c.same_top ? 1 : 0;
}

KlResult kl_divergence(ChunkEvaluator& engine, const KlBaseReader& base, std::optional<int32_t> bos,
                       const KlChunkObserver& observer) {
  if (engine.vocab() != base.header().n_vocab)
    throw Error(ErrorKind::InvalidValue, "the reference was made with a vocabulary of " +
                                             std::to_string(base.header().n_vocab) + " tokens, this model has " +
                                             std::to_string(engine.vocab()));
  const ChunkLayout layout = base.layout();
  KlResult result;
  score_chunks(
      engine, base.tokens(), layout, bos,
      [&](const ScoredRow& s) {
        const TokenComparison c = compare_row(s.logits, base.row(s.chunk, s.row), s.next);
        result.sums.add(c);
        result.kld.push_back(static_cast<float>(c.kld));
        result.p_diff.push_back(static_cast<float>(c.p_diff));
      },
      [&](int64_t chunk, double seconds) {
        if (observer) observer(chunk, layout.n_chunks, seconds, result.sums);
      });
  return result;
}

}  // namespace synapse::eval
