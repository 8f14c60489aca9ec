// synapse tokenize / detokenize: text to ids and back with a model's
// tokenizer (a GGUF file, a tokenizer.json or a SentencePiece .model).
// tokenize --bench FILE measures encoding speed instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8_stream.h"

namespace synapse::cli {
namespace {

struct TokenizeFlags {
  std::string model;
  std::string text;
  bool no_bos = false;
  bool parse_special = false;
  bool pieces = false;
  std::string bench_file;
  int bench_runs = 3;
};

// Encodes the file's text (no BOS, special tokens not matched) bench_runs
// times and prints the fastest run as JSON: bytes, tokens, seconds, MB/s.
int bench_encoding(const Tokenizer& tokenizer, const TokenizeFlags& f) {
  std::ifstream in(f.bench_file, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open " + f.bench_file);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  double best = 0;
  size_t n_tokens = 0;
  for (int run = 0; run < f.bench_runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    n_tokens = tokenizer.encode(text, false, false).size();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = run == 0 ? seconds : std::min(best, seconds);
  }
  const nlohmann::json out = {{"bytes", text.size()},
                              {"tokens", n_tokens},
                              {"seconds", best},
                              {"mb_per_s", best > 0 ? static_cast<double>(text.size()) / 1e6 / best : 0.0}};
  std::printf("%s\n", out.dump().c_str());
  return kExitOk;
}

int tokenize(const TokenizeFlags& f) {
  const auto tokenizer = load_tokenizer(f.model);
  if (!f.bench_file.empty()) return bench_encoding(*tokenizer, f);
  const std::vector<int32_t> ids = tokenizer->encode(f.text, !f.no_bos, f.parse_special);
  nlohmann::json out = nlohmann::json::array();
  for (int32_t id : ids) {
    if (f.pieces) out.push_back({id, tokenizer->token_to_piece(id, true)});
    else out.push_back(id);
  }
  std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return kExitOk;
}

struct DetokenizeFlags {
  std::string model;
  std::vector<int32_t> ids;
  bool raw = false;
};

int detokenize(const DetokenizeFlags& f) {
  const auto tokenizer = load_tokenizer(f.model);
  const int32_t n_vocab = tokenizer->vocabulary().size();
  for (int32_t id : f.ids)
    if (id < 0 || id >= n_vocab)
      throw synapse::Error(synapse::ErrorKind::InvalidValue,
                  "token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(n_vocab));
  // Ids can decode to bytes that are no text (a lone byte token): valid
  // UTF-8 unless --raw.
  const std::string bytes = tokenizer->decode(f.ids, true);
  const std::string text = f.raw ? bytes : valid_utf8(bytes);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
  return kExitOk;
}

Register tokenize_reg{{"tokenize", "Print the token ids of TEXT as a JSON array",
                       [](CLI::App& app) -> std::function<int()> {
                         auto f = std::make_shared<TokenizeFlags>();
                         app.add_option("-m,--model", f->model, "GGUF, tokenizer.json or SentencePiece .model")
                             ->required()
                             ->check(CLI::ExistingFile);
                         CLI::Option* text = app.add_option("text", f->text, "text to tokenize");
                         app.add_flag("--no-bos", f->no_bos, "do not add BOS");
                         app.add_flag("--parse-special", f->parse_special, "match special tokens in the text");
                         app.add_flag("--pieces", f->pieces, "print [id, piece] pairs");
                         app.add_option("--bench", f->bench_file,
                                        "instead: encode this file's text and print the speed (MB/s) as JSON")
                             ->check(CLI::ExistingFile);
                         app.add_option("--bench-runs", f->bench_runs, "runs for --bench; the fastest counts")
                             ->check(CLI::Range(1, 1000));
                         app.footer(
                             "\nExamples:\n"
                             "  synapse tokenize -m model.gguf \"Hello world\"\n"
                             "  synapse tokenize -m tokenizer.json --pieces --no-bos \"Hello world\"\n"
                             "  synapse tokenize -m model.gguf --bench corpus.txt\n");
                         return [f, text] {
                           if (f->bench_file.empty() && text->count() == 0)
                             throw Error(ErrorKind::Usage, "give the TEXT to tokenize (or --bench FILE)");
                           return tokenize(*f);
                         };
                       }}};

Register detokenize_reg{{"detokenize", "Print the text of token ids",
                         [](CLI::App& app) -> std::function<int()> {
                           auto f = std::make_shared<DetokenizeFlags>();
                           app.add_option("-m,--model", f->model, "GGUF, tokenizer.json or SentencePiece .model")
                               ->required()
                               ->check(CLI::ExistingFile);
                           app.add_option("ids", f->ids, "token ids")->required();
                           app.add_flag("--raw", f->raw,
                                        "print the exact bytes (default: invalid UTF-8 becomes U+FFFD)");
                           app.footer(
                               "\nExamples:\n"
                               "  synapse detokenize -m model.gguf 15043 3186\n"
                               "  synapse detokenize -m model.gguf --raw 226 130 | xxd\n");
                           return [f] { return detokenize(*f); };
                         }}};

}  // namespace
}  // namespace synapse::cli
