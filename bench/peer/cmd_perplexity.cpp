// perplexity FILE -f TEXT [-c 512] [-b N] [--chunks K] [-t T]
//   [--kl-divergence-base F [--kl-divergence]]: llama-perplexity's protocol
// on llama.cpp, through the same code as `synapse perplexity`
// (eval/perplexity_tool.h), so the two engines' numbers differ only by
// their tokenizers and logits.
#include <algorithm>
#include <memory>

#include "eval/perplexity_tool.h"
#include "llama_session.h"
#include "peer_commands.h"
#include "peer_error.h"

namespace synapse::peer {
namespace {

struct PerplexityArgs {
  std::string model;
  eval::PerplexityToolOptions tool;
  uint32_t n_batch = 512;
  int32_t threads = 1;
  AttentionOptions attention;
};

// Each chunk from an empty memory, in batches of at most n_batch, logits
// asked for every position (as llama-perplexity's KL mode does).
class LlamaEvaluator : public eval::ChunkEvaluator {
 public:
  LlamaEvaluator(const LlamaApi& api, const LlamaModel& model, int64_t n_ctx, const PerplexityArgs& args)
      : session_(api, model,
                 {.n_ctx = static_cast<uint32_t>(n_ctx),
                  .n_batch = std::min(args.n_batch, static_cast<uint32_t>(n_ctx)),
                  .n_threads = args.threads,
                  .attention = args.attention}) {}

  int64_t vocab() const override { return session_.n_vocab(); }

  void eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) override {
    session_.clear_memory();
    const auto n = static_cast<int64_t>(tokens.size());
    const auto vocab = static_cast<size_t>(session_.n_vocab());
    const auto batch = static_cast<int64_t>(session_.n_batch());
    for (int64_t begin = 0; begin < n; begin += batch) {
      const int64_t end = std::min(begin + batch, n);
      session_.decode(tokens.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)),
                      static_cast<llama_pos>(begin), /*all_logits=*/true);
      for (int64_t pos = std::max(begin, first); pos < std::min(end, n - 1); ++pos) {
        const std::span<const float> row = session_.logits(static_cast<int32_t>(pos - begin));
        std::copy(row.begin(), row.end(), rows.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(pos - first) * vocab));
      }
    }
  }

 private:
  LlamaSession session_;
};

int run_perplexity(const PerplexityArgs& args, const PeerOptions& options) {
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model);
  eval::PerplexityEngine engine;
  engine.tokenize = [&](const std::string& text) { return model.tokenize(text, true, false); };
  if (model.added_bos() >= 0) engine.bos = model.added_bos();
  engine.open = [&](int64_t n_ctx) -> std::unique_ptr<eval::ChunkEvaluator> {
    return std::make_unique<LlamaEvaluator>(api, model, n_ctx, args);
  };
  eval::run_perplexity_tool(args.tool, engine);
  return kExitOk;
}

}  // namespace

Action setup_perplexity(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<PerplexityArgs>();
  sub.add_option("file", args->model, "GGUF model")->required();
  sub.add_option("-f,--file", args->tool.text_file, "text to score");
  sub.add_option("-c,--ctx-size", args->tool.n_ctx, "tokens per chunk (default 512)")->check(CLI::Range(4, 1 << 20));
  sub.add_option("-b,--batch", args->n_batch, "most tokens per decode (default 512)")->check(CLI::PositiveNumber);
  sub.add_option("--chunks", args->tool.max_chunks, "score at most this many chunks")->check(CLI::NonNegativeNumber);
  sub.add_option("--kl-divergence-base", args->tool.kl_base, "save (or, with --kl-divergence, compare with) FILE");
  sub.add_flag("--kl-divergence", args->tool.kl, "compare with the reference of --kl-divergence-base");
  sub.add_option("-t,--threads", args->threads, "threads (default 1)")->check(CLI::Range(1, 1024));
  add_attention_flags(sub, args->attention);
  return [args, &options] { return run_perplexity(*args, options); };
}

}  // namespace synapse::peer
