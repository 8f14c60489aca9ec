// bench FILE --pp 512 --tg 128 [-d D] -t T -r R: throughput measured the
// way llama-bench does it, so numbers compare with published llama-bench runs.
//   pp<N>: N random token ids decoded in batches of --ubatch (llama-bench's
//          n_ubatch, 512) into an empty context; t/s = N / time.
//   tg<N>: N single-token decodes of random ids from an empty context.
// With a depth D (llama-bench's -d) each run first decodes D tokens,
// untimed, and the test follows them. Each test has its own context (n_ctx =
// the depth and the test's tokens, as llama-bench), one untimed warm-up
// run (none with --no-warmup), then R timed repetitions, each starting from a cleared memory. Token
// ids come from a fixed seed. One JSON line per test; a tg line also gives
// weights_in_2m_pages, as synapse bench does, where llama.cpp mapped the file.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/mapped_file.h"
#include "llama_session.h"
#include "peer_commands.h"
#include "peer_error.h"
#include "peer_output.h"

namespace synapse::peer {
namespace {

constexpr uint32_t kSeed = 1234;
// llama-bench's default n_batch/n_ubatch, used by the tg test.
constexpr uint32_t kDefaultBatch = 512;

struct BenchArgs {
  std::string model;
  uint32_t pp = 512;
  uint32_t tg = 128;
  uint32_t depth = 0;
  uint32_t ubatch = kDefaultBatch;
  int32_t threads = 1;
  AttentionOptions attention;
  int32_t reps = 5;
  bool no_warmup = false;
};

std::vector<llama_token> random_tokens(uint32_t n, int32_t n_vocab) {
  std::mt19937 rng(kSeed);
  std::vector<llama_token> tokens(n);
  for (auto& t : tokens) t = static_cast<llama_token>(rng() % static_cast<uint32_t>(n_vocab));
  return tokens;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Decodes `tokens` from position `first` in batches the session takes.
void decode_prompt(LlamaSession& session, std::span<const llama_token> tokens, llama_pos first) {
  for (size_t i = 0; i < tokens.size(); i += session.n_batch()) {
    const size_t count = std::min<size_t>(session.n_batch(), tokens.size() - i);
    session.decode(tokens.subspan(i, count), first + static_cast<llama_pos>(i), /*all_logits=*/false);
  }
}

// Clears the memory and decodes the depth's tokens (untimed).
void fill_context(LlamaSession& session, std::span<const llama_token> depth) {
  session.clear_memory();
  decode_prompt(session, depth, 0);
}

double time_prompt(LlamaSession& session, std::span<const llama_token> depth, std::span<const llama_token> tokens) {
  fill_context(session, depth);
  const auto start = std::chrono::steady_clock::now();
  decode_prompt(session, tokens, static_cast<llama_pos>(depth.size()));
  return seconds_since(start);
}

double time_generation(LlamaSession& session, std::span<const llama_token> depth,
                       std::span<const llama_token> tokens) {
  fill_context(session, depth);
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < tokens.size(); ++i) {
    session.decode(tokens.subspan(i, 1), static_cast<llama_pos>(depth.size() + i), /*all_logits=*/false);
  }
  return seconds_since(start);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The share of the model file's mappings in this process (llama.cpp maps
// it itself) that lies in 2 MiB pages, as synapse bench reports its own
// weights': decode reads every weight, and a TLB miss per 4 KiB slows it.
// Empty where the file is not mapped (llama.cpp read it instead) or smaps
// cannot be read.
std::optional<double> weights_in_huge_pages(const std::string& model) {
  std::error_code error;
  const std::filesystem::path path = std::filesystem::canonical(model, error);
  std::ifstream smaps("/proc/self/smaps");
  if (error || !smaps) return std::nullopt;
  const FileMappingPages pages = smaps_file_mapping_pages(smaps, path.string());
  if (pages.mapped == 0) return std::nullopt;
  return static_cast<double>(pages.in_huge_pages) / static_cast<double>(pages.mapped);
}

void report(const BenchArgs& args, const char* kind, uint32_t n_prompt, uint32_t n_gen,
            const std::vector<double>& tps, std::optional<double> huge_page_share = std::nullopt) {
  std::string test = std::string(kind) + std::to_string(n_prompt + n_gen);
  if (args.depth > 0) test += " @ d" + std::to_string(args.depth);
  nlohmann::json line = {
      {"test", test},
      {"model", args.model},
      {"n_prompt", n_prompt},
      {"n_gen", n_gen},
      {"n_depth", args.depth},
      {"n_threads", args.threads},
      {"reps", args.reps},
      {"tps", tps},
      {"median_tps", median(tps)},
  };
  if (huge_page_share) line["weights_in_2m_pages"] = *huge_page_share;
  OutputFile out("-");
  out.write_text(line.dump() + "\n");
  out.close();
}

int run_bench(const BenchArgs& args, const PeerOptions& options) {
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model);

  // The depth's tokens, then the test's, as synapse bench draws them.
  const std::vector<llama_token> ids = random_tokens(args.depth + std::max(args.pp, args.tg), model.n_vocab());
  const std::span<const llama_token> depth = std::span(ids).first(args.depth);
  if (args.pp > 0) {
    LlamaSession session(api, model,
                         {.n_ctx = args.depth + args.pp,
                          .n_batch = std::min(args.ubatch, std::max(args.pp, args.depth)),
                          .n_threads = args.threads,
                          .attention = args.attention});
    const std::span<const llama_token> tokens = std::span(ids).subspan(args.depth, args.pp);
    if (!args.no_warmup) time_prompt(session, depth, tokens);
    std::vector<double> tps;
    for (int32_t r = 0; r < args.reps; ++r) tps.push_back(args.pp / time_prompt(session, depth, tokens));
    report(args, "pp", args.pp, 0, tps);
  }
  if (args.tg > 0) {
    LlamaSession session(api, model,
                         {.n_ctx = args.depth + args.tg,
                          .n_batch = kDefaultBatch,
                          .n_threads = args.threads,
                          .attention = args.attention});
    const std::span<const llama_token> tokens = std::span(ids).subspan(args.depth, args.tg);
    if (!args.no_warmup) time_generation(session, depth, tokens.first(1));  // one token, as llama-bench
    std::vector<double> tps;
    for (int32_t r = 0; r < args.reps; ++r) tps.push_back(args.tg / time_generation(session, depth, tokens));
    report(args, "tg", 0, args.tg, tps, weights_in_huge_pages(args.model));
  }
  return kExitOk;
}

}  // namespace

Action setup_bench(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<BenchArgs>();
  sub.add_option("file", args->model, "GGUF model")->required();
  sub.add_option("--pp", args->pp, "prompt length of the pp test, 0 to skip (default 512)");
  sub.add_option("--tg", args->tg, "generated tokens of the tg test, 0 to skip (default 128)");
  sub.add_option("-d,--depth", args->depth, "tokens in the context before each test, decoded untimed (default 0)");
  sub.add_option("--ubatch", args->ubatch, "most tokens per decode of a prompt (default 512, llama-bench's n_ubatch)")
      ->check(CLI::PositiveNumber);
  add_attention_flags(sub, args->attention);
  sub.add_option("-t,--threads", args->threads, "threads (default 1)")->check(CLI::Range(1, 1024));
  sub.add_flag("--no-warmup", args->no_warmup, "skip each test's untimed warm-up run (as llama-bench's flag)");
  sub.add_option("-r,--reps", args->reps, "timed repetitions (default 5)")
      ->check(CLI::Range(1, 1000));
  return [args, &options] { return run_bench(*args, options); };
}

}  // namespace synapse::peer
