// tokenize FILE TEXT [--no-bos] [--parse-special]: the model's own tokenizer
// (llama_tokenize), printed as a JSON array of ids. Loads the vocabulary only.
// tokenize FILE --bench TEXT_FILE: the fastest of three llama_tokenize calls
// on the file's text (no BOS, no special tokens), as synapse tokenize --bench
// prints it: {"bytes":..,"tokens":..,"seconds":..,"mb_per_s":..}.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "llama_session.h"
#include "peer_commands.h"
#include "peer_error.h"
#include "peer_output.h"

namespace synapse::peer {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string text;
  bool no_bos = false;
  bool parse_special = false;
  std::string bench_file;
};

// add_special adds BOS (and EOS) only where the model's metadata asks for it.
std::vector<llama_token> tokenize(const LlamaModel& model, const TokenizeArgs& args) {
  return model.tokenize(args.text, !args.no_bos, args.parse_special);
}

int run_bench(const LlamaModel& model, TokenizeArgs args) {
  std::ifstream in(args.bench_file, std::ios::binary);
  if (!in) throw PeerError(kExitUsage, "cannot open " + args.bench_file);
  args.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  args.no_bos = true;
  args.parse_special = false;
  double best = 0;
  size_t n_tokens = 0;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    n_tokens = tokenize(model, args).size();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = run == 0 ? seconds : std::min(best, seconds);
  }
  const double mb_per_s = best > 0 ? static_cast<double>(args.text.size()) / 1e6 / best : 0.0;
  OutputFile out("-");
  out.write_text("{\"bytes\":" + std::to_string(args.text.size()) + ",\"tokens\":" + std::to_string(n_tokens) +
                 ",\"seconds\":" + std::to_string(best) + ",\"mb_per_s\":" + std::to_string(mb_per_s) + "}\n");
  out.close();
  return kExitOk;
}

int run_tokenize(const TokenizeArgs& args, const PeerOptions& options) {
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model, /*vocab_only=*/true);
  if (!args.bench_file.empty()) return run_bench(model, args);
  std::string line = "[";
  for (llama_token id : tokenize(model, args)) {
    line += (line.size() > 1 ? "," : "") + std::to_string(id);
  }
  OutputFile out("-");
  out.write_text(line + "]\n");
  out.close();
  return kExitOk;
}

}  // namespace

Action setup_tokenize(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<TokenizeArgs>();
  sub.add_option("file", args->model, "GGUF model")->required();
  CLI::Option* text = sub.add_option("text", args->text, "text to tokenize");
  sub.add_option("--bench", args->bench_file, "instead: time tokenizing this file's text; print MB/s as JSON")
      ->excludes(text);
  sub.add_flag("--no-bos", args->no_bos, "do not add BOS/EOS (add_special = false)");
  sub.add_flag("--parse-special", args->parse_special,
               "recognize special and control tokens written in the text");
  return [args, text, &options] {
    if (args->bench_file.empty() && text->count() == 0) throw PeerError(kExitUsage, "give TEXT or --bench FILE");
    return run_tokenize(*args, options);
  };
}

}  // namespace synapse::peer
