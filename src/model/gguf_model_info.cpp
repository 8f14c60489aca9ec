// ModelInfo of a GGUF file: general.name and the tokenizer's special tokens.
#include <algorithm>
#include <array>
#include <string_view>

#include "model/gguf_import.h"
#include "synapse/error.h"

namespace synapse {
namespace {

std::optional<int32_t> token_id(const GgufMetadata& md, const std::string& key) {
  if (!md.contains(key)) return std::nullopt;
  const int64_t id = md.get_int(key);
  if (id < 0 || id > INT32_MAX)
    throw Error(ErrorKind::InvalidValue, key + " = " + std::to_string(id) + " is not a token id", Error::kNoOffset,
                key);
  return static_cast<int32_t>(id);
}

// llama.cpp's default when tokenizer.ggml.add_bos_token is absent
// (src/llama-vocab.cpp): SentencePiece ("llama") vocabularies add BOS, BPE
// ("gpt2") ones only for the Llama 3 style pre-tokenizers. Without tokenizer
// metadata we assume SentencePiece for the llama architecture.
bool default_add_bos(const GgufMetadata& md, const std::string& arch) {
  if (!md.contains("tokenizer.ggml.model")) return arch == "llama";
  const std::string& model = md.get_string("tokenizer.ggml.model");
  if (model == "llama") return true;
  if (model != "gpt2" || !md.contains("tokenizer.ggml.pre")) return false;
  constexpr std::array<std::string_view, 9> kLlama3Pre = {"llama3",   "llama-v3", "llama-bpe", "falcon3",     "falcon-h1",
                                                          "pixtral", "midm-2.0", "lfm2",      "jina-v5-nano"};
  const std::string& pre = md.get_string("tokenizer.ggml.pre");
  return std::find(kLlama3Pre.begin(), kLlama3Pre.end(), pre) != kLlama3Pre.end();
}

}  // namespace

ModelInfo gguf_model_info(const GgufMetadata& md, const std::string& fallback_name, const std::string& arch,
                          const DenseHparams& hp) {
  ModelInfo info;
  info.architecture = arch;
  info.name = md.contains("general.name") ? md.get_string("general.name") : fallback_name;
  info.n_vocab = hp.n_vocab;
  info.n_embd = hp.n_embd;
  info.n_layer = hp.n_layer;
  info.n_ctx_train = hp.n_ctx_train;
  info.bos_token = token_id(md, "tokenizer.ggml.bos_token_id");
  info.eos_token = token_id(md, "tokenizer.ggml.eos_token_id");
  info.add_bos = md.contains("tokenizer.ggml.add_bos_token") ? md.get_bool("tokenizer.ggml.add_bos_token")
                                                             : default_add_bos(md, arch);
  return info;
}

}  // namespace synapse
