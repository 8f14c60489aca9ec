// logits FILE TOKENS...: logits for every position, one JSON line per
// position: {"pos":i,"argmax":id,"top":[[id,logit],...]} (top 5). The tokens
// go in as one batch, or with -b N in batches of at most N from position 0
// on (-b 1: single-token decode steps, teacher-forced).
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "llama_session.h"
#include "peer_commands.h"
#include "peer_error.h"
#include "peer_output.h"

namespace synapse::peer {
namespace {

struct LogitsArgs {
  std::string model;
  std::vector<llama_token> tokens;
  int32_t threads = 1;
  AttentionOptions attention;
  uint32_t n_ctx = 0;  // 0: max(512, number of tokens)
  uint32_t n_batch = 0;  // most tokens per decode; 0: all of them
  std::string dump;    // raw float32 rows, one per position
};

std::string position_line(int32_t pos, std::span<const float> row) {
  std::string line = "{\"pos\":" + std::to_string(pos) +
                     ",\"argmax\":" + std::to_string(argmax(row)) + ",\"top\":[";
  const std::vector<int32_t> top = top_k(row, 5);
  for (size_t i = 0; i < top.size(); ++i) {
    if (i > 0) line += ',';
    line += '[' + std::to_string(top[i]) + ',' + json_float(row[top[i]]) + ']';
  }
  return line + "]}\n";
}

int run_logits(const LogitsArgs& args, const PeerOptions& options) {
  const auto n_tokens = static_cast<uint32_t>(args.tokens.size());
  const uint32_t n_ctx = args.n_ctx != 0 ? args.n_ctx : std::max(512u, n_tokens);
  if (n_ctx < n_tokens) {
    throw PeerError(kExitUsage, "-c " + std::to_string(n_ctx) + " is smaller than the " +
                                    std::to_string(n_tokens) + " tokens given");
  }
  const uint32_t n_batch = args.n_batch != 0 ? std::min(args.n_batch, n_tokens) : n_tokens;
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model);
  LlamaSession session(api, model,
                       {.n_ctx = n_ctx,
                        .n_batch = n_batch,
                        .n_threads = args.threads,
                        .attention = args.attention});

  std::optional<OutputFile> dump;
  if (!args.dump.empty()) dump.emplace(args.dump);
  OutputFile out("-");
  const std::span<const llama_token> tokens(args.tokens);
  for (uint32_t first = 0; first < n_tokens; first += n_batch) {
    const uint32_t count = std::min(n_batch, n_tokens - first);
    session.decode(tokens.subspan(first, count), static_cast<llama_pos>(first), /*all_logits=*/true);
    for (uint32_t i = 0; i < count; ++i) {
      const std::span<const float> row = session.logits(static_cast<int32_t>(i));
      out.write_text(position_line(static_cast<int32_t>(first + i), row));
      if (dump) dump->write(row);
    }
  }
  if (dump) dump->close();
  out.close();
  return kExitOk;
}

}  // namespace

Action setup_logits(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<LogitsArgs>();
  sub.add_option("file", args->model, "GGUF model")->required();
  sub.add_option("tokens", args->tokens, "token ids, evaluated from position 0")
      ->required()
      ->check(CLI::NonNegativeNumber);
  add_attention_flags(sub, args->attention);
  sub.add_option("-t,--threads", args->threads, "threads (default 1)")->check(CLI::Range(1, 1024));
  sub.add_option("-c,--ctx", args->n_ctx, "context size (default max(512, number of tokens))")
      ->check(CLI::PositiveNumber);
  sub.add_option("-b,--batch", args->n_batch,
                 "most tokens per decode (default: all in one batch; 1: single-token steps)")
      ->check(CLI::PositiveNumber);
  sub.add_option("--dump", args->dump, "also write every logits row as raw float32 to FILE");
  return [args, &options] { return run_logits(*args, options); };
}

}  // namespace synapse::peer
