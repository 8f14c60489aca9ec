#include "eval/perplexity_tool.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "eval/kl_base_file.h"
#include "eval/kl_divergence.h"
#include "eval/kl_report.h"
#include "synapse/error.h"

namespace synapse::eval {
namespace {

// After the first chunk, as llama-perplexity: its time and the whole run's.
void report_eta(const char* tool, int64_t chunk, int64_t n_chunks, double seconds) {
  if (chunk != 0) return;
  std::fprintf(stderr, "%s: %.2f seconds per chunk - ETA %.2f minutes\n", tool, seconds,
               seconds * static_cast<double>(n_chunks) / 60.0);
}

void describe(const ChunkLayout& layout, size_t n_tokens) {
  std::fprintf(stderr, "perplexity: %zu tokens, %lld chunks of %lld, scoring the last %lld tokens of each\n", n_tokens,
               static_cast<long long>(layout.n_chunks), static_cast<long long>(layout.n_ctx),
               static_cast<long long>(layout.scored()));
}

void run_perplexity(const PerplexityToolOptions& options, const PerplexityEngine& engine) {
  const std::vector<int32_t> tokens = engine.tokenize(read_text_file(options.text_file));
  const ChunkLayout layout = chunk_layout(static_cast<int64_t>(tokens.size()), options.n_ctx, options.max_chunks);
  describe(layout, tokens.size());
  const std::unique_ptr<ChunkEvaluator> evaluator = engine.open(layout.n_ctx);
  std::unique_ptr<KlBaseWriter> base;
  if (!options.kl_base.empty()) {
    const KlBaseHeader header{static_cast<uint32_t>(layout.n_ctx), static_cast<uint32_t>(evaluator->vocab()),
                              static_cast<uint32_t>(layout.n_chunks)};
    base = std::make_unique<KlBaseWriter>(options.kl_base, header, tokens);
  }
  const NllSums nll = perplexity(*evaluator, tokens, layout, engine.bos, chunk_printer("perplexity"), base.get());
  if (base) {
    base->commit();
    std::fprintf(stderr, "perplexity: saved the reference log-probabilities to %s\n", options.kl_base.c_str());
  }
  print_final_estimate(nll);
}

void run_kl_divergence(const PerplexityToolOptions& options, const PerplexityEngine& engine) {
  const KlBaseReader base(options.kl_base);
  const ChunkLayout layout = base.layout();
  describe(layout, base.tokens().size());
  const std::unique_ptr<ChunkEvaluator> evaluator = engine.open(layout.n_ctx);
  std::printf("%s", kl_chunk_header().c_str());
  const KlResult result = kl_divergence(*evaluator, base, engine.bos,
                                        [](int64_t chunk, int64_t n_chunks, double seconds, const KlSums& sums) {
                                          report_eta("perplexity", chunk, n_chunks, seconds);
                                          std::printf("%s", kl_chunk_line(chunk, sums).c_str());
                                          std::fflush(stdout);
                                        });
  std::printf("\n%s", kl_summary(result).c_str());
}

}  // namespace

ChunkObserver chunk_printer(const char* tool) {
  return [tool](const ChunkDone& done) {
    report_eta(tool, done.chunk, done.n_chunks, done.seconds);
    std::printf("[%lld]%.4lf,", static_cast<long long>(done.chunk + 1), done.nll->ppl());
    std::fflush(stdout);
  };
}

void print_final_estimate(const NllSums& nll) {
  std::printf("\nFinal estimate: PPL = %.4lf +/- %.5lf\n", nll.ppl(), nll.ppl_error());
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run_perplexity_tool(const PerplexityToolOptions& options, const PerplexityEngine& engine) {
  if (options.kl) {
    if (options.kl_base.empty())
      throw Error(ErrorKind::Usage, "--kl-divergence compares with a reference: give it with --kl-divergence-base FILE");
    if (!options.text_file.empty())
      throw Error(ErrorKind::Usage, "--kl-divergence evaluates the reference's own tokens: drop -f");
    run_kl_divergence(options, engine);
    return;
  }
  if (options.text_file.empty()) throw Error(ErrorKind::Usage, "give the text to score with -f FILE");
  run_perplexity(options, engine);
}

}  // namespace synapse::eval
