// synapse tokenize / detokenize: text to ids and back with a model's
// tokenizer (a GGUF file, a tokenizer.json or a SentencePiece .model).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct TokenizeFlags {
  std::string model;
  std::string text;
  bool no_bos = false;
  bool parse_special = false;
  bool pieces = false;
};

int tokenize(const TokenizeFlags& f) {
  const auto tokenizer = load_tokenizer(f.model);
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
};

int detokenize(const DetokenizeFlags& f) {
  const auto tokenizer = load_tokenizer(f.model);
  const int32_t n_vocab = tokenizer->vocabulary().size();
  for (int32_t id : f.ids)
    if (id < 0 || id >= n_vocab)
      throw synapse::Error(synapse::ErrorKind::InvalidValue,
                  "token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(n_vocab));
  const std::string text = tokenizer->decode(f.ids, true);
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
                         app.add_option("text", f->text, "text to tokenize")->required();
                         app.add_flag("--no-bos", f->no_bos, "do not add BOS");
                         app.add_flag("--parse-special", f->parse_special, "match special tokens in the text");
                         app.add_flag("--pieces", f->pieces, "print [id, piece] pairs");
                         return [f] { return tokenize(*f); };
                       }}};

Register detokenize_reg{{"detokenize", "Print the text of token ids",
                         [](CLI::App& app) -> std::function<int()> {
                           auto f = std::make_shared<DetokenizeFlags>();
                           app.add_option("-m,--model", f->model, "GGUF, tokenizer.json or SentencePiece .model")
                               ->required()
                               ->check(CLI::ExistingFile);
                           app.add_option("ids", f->ids, "token ids")->required();
                           return [f] { return detokenize(*f); };
                         }}};

}  // namespace
}  // namespace synapse::cli
