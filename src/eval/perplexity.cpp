#include "eval/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "eval/kl_base_file.h"
#include "eval/token_scores.h"
#include "synapse/error.h"

namespace synapse::eval {

ChunkLayout chunk_layout(int64_t n_tokens, int64_t n_ctx, int64_t max_chunks) {
  if (n_ctx < 4) throw Error(ErrorKind::Usage, "the context (-c) must be at least 4 tokens, got " + std::to_string(n_ctx));
  // No chunk would measure nothing (and report a perfect score).
  if (max_chunks == 0) throw Error(ErrorKind::Usage, "--chunks 0 measures nothing: give 1 or more (-1: all)");
  if (n_tokens < 2 * n_ctx)
    throw Error(ErrorKind::InvalidValue, "the text is " + std::to_string(n_tokens) + " tokens; a context of " +
                                             std::to_string(n_ctx) + " needs at least " +
                                             std::to_string(2 * n_ctx) + " (give more text or a smaller -c)");
  ChunkLayout layout;
  layout.n_ctx = n_ctx;
  layout.n_chunks = n_tokens / n_ctx;
  if (max_chunks >= 0 && max_chunks < layout.n_chunks) layout.n_chunks = max_chunks;
  layout.first = n_ctx / 2;
  return layout;
}

double NllSums::mean_error() const {
  if (count < 2) return 0;
  const double m = mean();
  const double variance = sum2 / static_cast<double>(count) - m * m;
  return variance > 0 ? std::sqrt(variance / static_cast<double>(count - 1)) : 0;
}

double NllSums::ppl() const { return std::exp(mean()); }

double NllSums::ppl_error() const { return ppl() * mean_error(); }

void score_chunks(ChunkEvaluator& engine, std::span<const int32_t> tokens, const ChunkLayout& layout,
                  std::optional<int32_t> bos, const std::function<void(const ScoredRow&)>& on_row,
                  const std::function<void(int64_t chunk, double seconds)>& on_chunk) {
  const auto vocab = static_cast<size_t>(engine.vocab());
  for (int32_t t : tokens)
    if (t < 0 || static_cast<size_t>(t) >= vocab)
      throw Error(ErrorKind::InvalidValue, "token " + std::to_string(t) + " is outside the model's vocabulary of " +
                                               std::to_string(vocab));
  std::vector<float> rows(static_cast<size_t>(layout.scored()) * vocab);
  std::vector<int32_t> input(static_cast<size_t>(layout.n_ctx));
  for (int64_t chunk = 0; chunk < layout.n_chunks; ++chunk) {
    const auto begin = tokens.begin() + chunk * layout.n_ctx;
    std::copy(begin, begin + layout.n_ctx, input.begin());
    if (bos) input[0] = *bos;
    const auto start = std::chrono::steady_clock::now();
    engine.eval(input, layout.first, rows);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Row r predicts the token after position first + r.
    const int64_t next = chunk * layout.n_ctx + layout.first + 1;
    for (int64_t r = 0; r < layout.scored(); ++r)
      on_row({chunk, r, std::span<const float>(rows.data() + static_cast<size_t>(r) * vocab, vocab),
              tokens[static_cast<size_t>(next + r)]});
    on_chunk(chunk, seconds);
  }
}

NllSums perplexity(ChunkEvaluator& engine, std::span<const int32_t> tokens, const ChunkLayout& layout,
                   std::optional<int32_t> bos, const ChunkObserver& observer, KlBaseWriter* base) {
  std::vector<float> log_probs(base ? static_cast<size_t>(engine.vocab()) : 0);
  NllSums nll;
  score_chunks(
      engine, tokens, layout, bos,
      [&](const ScoredRow& s) {
        nll.add(score_row(s.logits, s.next).nll);
        if (base) {
          log_softmax(s.logits, log_probs);
          base->write_row(log_probs);
        }
      },
      [&](int64_t chunk, double seconds) {
        if (observer) observer({chunk, layout.n_chunks, seconds, &nll});
      });
  return nll;
}

}  // namespace synapse::eval
