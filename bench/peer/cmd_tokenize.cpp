// tokenize FILE TEXT [--no-bos] [--parse-special]: the model's own tokenizer
// (llama_tokenize), printed as a JSON array of ids. Loads the vocabulary only.
#include <climits>
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
};

std::vector<llama_token> tokenize(const LlamaApi& api, const LlamaModel& model,
                                  const TokenizeArgs& args) {
  if (args.text.size() > INT32_MAX) throw PeerError(kExitUsage, "text too long");
  const auto text_len = static_cast<int32_t>(args.text.size());
  // add_special adds BOS (and EOS) only where the model's metadata asks for it.
  const bool add_special = !args.no_bos;
  std::vector<llama_token> tokens(args.text.size() + 2);
  int32_t n = api.tokenize(model.vocab(), args.text.data(), text_len, tokens.data(),
                           static_cast<int32_t>(tokens.size()), add_special, args.parse_special);
  if (n < 0 && n != INT32_MIN) {  // buffer too small: -n is the size needed
    tokens.resize(static_cast<size_t>(-n));
    n = api.tokenize(model.vocab(), args.text.data(), text_len, tokens.data(),
                     static_cast<int32_t>(tokens.size()), add_special, args.parse_special);
  }
  if (n < 0) throw PeerError(kExitFailed, "llama_tokenize failed (" + std::to_string(n) + ")");
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

int run_tokenize(const TokenizeArgs& args, const PeerOptions& options) {
  const LlamaApi api = start_peer(options);
  const LlamaModel model(api, args.model, /*vocab_only=*/true);
  std::string line = "[";
  for (llama_token id : tokenize(api, model, args)) {
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
  sub.add_option("text", args->text, "text to tokenize")->required();
  sub.add_flag("--no-bos", args->no_bos, "do not add BOS/EOS (add_special = false)");
  sub.add_flag("--parse-special", args->parse_special,
               "recognize special and control tokens written in the text");
  return [args, &options] { return run_tokenize(*args, options); };
}

}  // namespace synapse::peer
