// greedy FILE -n N TOKENS...: evaluates the prompt in one batch, then picks
// the argmax token N times, feeding each back as a single-token decode.
// Prints the N generated ids on one line. --logits FILE writes one JSON line
// per step, {"step":k,"id":id,"logit":top1}; --dump FILE writes each step's
// full logits row (the row the id was picked from) as raw float32.
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

struct GreedyArgs {
  std::string model;
  std::vector<llama_token> prompt;
  uint32_t n_generate = 0;
  int32_t threads = 1;
  AttentionOptions attention;
  uint32_t n_ctx = 0;  // 0: max(512, prompt + generated)
  std::string logits;
  std::string dump;
};

int run_greedy(const GreedyArgs& args, const PeerOptions& options) {
  const auto n_prompt = static_cast<uint32_t>(args.prompt.size());
  const uint32_t needed = n_prompt + args.n_generate;
  const uint32_t n_ctx = args.n_ctx != 0 ? args.n_ctx : std::max(512u, needed);
  if (n_ctx < needed) {
    throw PeerError(kExitUsage, "-c " + std::to_string(n_ctx) + " cannot hold " +
                                    std::to_string(needed) + " tokens");
  }
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model);
  LlamaSession session(api, model,
                       {.n_ctx = n_ctx,
                        .n_batch = n_prompt,
                        .n_threads = args.threads,
                        .attention = args.attention});

  std::optional<OutputFile> logits_log;
  if (!args.logits.empty()) logits_log.emplace(args.logits);
  std::optional<OutputFile> dump;
  if (!args.dump.empty()) dump.emplace(args.dump);

  std::vector<llama_token> generated;
  session.decode(args.prompt, 0, /*all_logits=*/false);
  for (uint32_t step = 0; step < args.n_generate; ++step) {
    if (step > 0) {
      session.decode(std::span(&generated.back(), 1), static_cast<llama_pos>(n_prompt + step - 1),
                     /*all_logits=*/false);
    }
    const std::span<const float> row = session.last_logits();
    const llama_token id = argmax(row);
    generated.push_back(id);
    if (logits_log) {
      logits_log->write_text("{\"step\":" + std::to_string(step) + ",\"id\":" + std::to_string(id) +
                             ",\"logit\":" + json_float(row[id]) + "}\n");
    }
    if (dump) dump->write(row);
  }
  if (logits_log) logits_log->close();
  if (dump) dump->close();

  std::string line;
  for (llama_token id : generated) line += (line.empty() ? "" : " ") + std::to_string(id);
  OutputFile out("-");
  out.write_text(line + "\n");
  out.close();
  return kExitOk;
}

}  // namespace

Action setup_greedy(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<GreedyArgs>();
  sub.add_option("file", args->model, "GGUF model")->required();
  sub.add_option("tokens", args->prompt, "prompt token ids (e.g. 1 for BOS alone)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("-n", args->n_generate, "number of tokens to generate")->required();
  add_attention_flags(sub, args->attention);
  sub.add_option("-t,--threads", args->threads, "threads (default 1)")->check(CLI::Range(1, 1024));
  sub.add_option("-c,--ctx", args->n_ctx, "context size (default max(512, prompt + n))")
      ->check(CLI::PositiveNumber);
  sub.add_option("--logits", args->logits,
                 "write the top-1 logit of each step as JSON lines to FILE");
  sub.add_option("--dump", args->dump, "write each step's logits row as raw float32 to FILE");
  return [args, &options] { return run_greedy(*args, options); };
}

}  // namespace synapse::peer
