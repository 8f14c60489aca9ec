// llama-perplexity's chunked protocol, engine-neutral: the text's tokens are
// cut into non-overlapping chunks of n_ctx, each evaluated from an empty
// context with its first token replaced by BOS where the vocabulary adds
// one; the logits of the chunk's second half (positions n_ctx/2 .. n_ctx-2)
// score the token after each. PPL = exp(mean NLL), its error the standard
// error of the mean NLL times PPL. Synapse and the llama.cpp peer
// (bench/peer) both run this code, each with its own ChunkEvaluator.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace synapse::eval {

class KlBaseWriter;

// An engine: evaluates one chunk from an empty context.
class ChunkEvaluator {
 public:
  virtual ~ChunkEvaluator() = default;
  virtual int64_t vocab() const = 0;
  // Evaluates `tokens` at positions 0, 1, ... and writes the logits rows of
  // positions [first, tokens.size() - 1) to `rows`, [rows, vocab].
  virtual void eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) = 0;
};

// The chunks a protocol run scores.
struct ChunkLayout {
  int64_t n_ctx = 0;
  int64_t n_chunks = 0;
  int64_t first = 0;  // the first scored position of a chunk: n_ctx / 2
  int64_t scored() const { return n_ctx - 1 - first; }  // rows per chunk
};

// The layout for n_tokens tokens: every whole chunk, at most max_chunks
// (negative: no limit). Throws Error(Usage) for n_ctx < 4 or max_chunks 0 and
// Error(InvalidValue) for fewer than 2 * n_ctx tokens (llama.cpp's rule).
ChunkLayout chunk_layout(int64_t n_tokens, int64_t n_ctx, int64_t max_chunks);

// The sums of per-token NLLs and their squares.
struct NllSums {
  double sum = 0, sum2 = 0;
  int64_t count = 0;
  void add(double nll) {
    sum += nll;
    sum2 += nll * nll;
    ++count;
  }
  double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0; }
  // Standard error of the mean (0 with fewer than two values).
  double mean_error() const;
  double ppl() const;
  double ppl_error() const;
};

// One chunk done: the running estimate over chunks [0, chunk].
struct ChunkDone {
  int64_t chunk = 0;     // 0-based
  int64_t n_chunks = 0;
  double seconds = 0;    // this chunk's evaluation
  const NllSums* nll = nullptr;
};
using ChunkObserver = std::function<void(const ChunkDone&)>;

// A scored row: the logits of chunk position first + row, and the token
// that came after it.
struct ScoredRow {
  int64_t chunk = 0;
  int64_t row = 0;
  std::span<const float> logits;
  int32_t next = 0;
};

// Evaluates every chunk of `layout` over `tokens` (BOS in front when `bos`)
// and hands each scored row to `on_row`, then the chunk's evaluation time
// to `on_chunk`. Throws Error(InvalidValue) for a token outside the
// engine's vocabulary, before evaluating anything.
void score_chunks(ChunkEvaluator& engine, std::span<const int32_t> tokens, const ChunkLayout& layout,
                  std::optional<int32_t> bos, const std::function<void(const ScoredRow&)>& on_row,
                  const std::function<void(int64_t chunk, double seconds)>& on_chunk);

// Runs the protocol over `tokens`; with `base`, also saves each scored row's
// log-probabilities there (--kl-divergence-base).
NllSums perplexity(ChunkEvaluator& engine, std::span<const int32_t> tokens, const ChunkLayout& layout,
                   std::optional<int32_t> bos, const ChunkObserver& observer, KlBaseWriter* base = nullptr);

}  // namespace synapse::eval
