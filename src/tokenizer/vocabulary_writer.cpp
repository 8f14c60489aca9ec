#include "tokenizer/vocabulary_writer.h"

#include <vector>

#include "synapse/error.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {

namespace {

// The tokenizer.ggml.pre name whose patterns are the vocabulary's.
std::string pretokenizer_name(const Vocabulary& vocab) {
  for (const char* name : {"qwen2", "llama-bpe", "gpt-2", "smollm"})
    if (pretokenizer_patterns_for(name) == vocab.pretokenizer_patterns) return name;
  throw Error(ErrorKind::Unsupported, "the vocabulary's pre-tokenizer regex matches none llama.cpp names");
}

void set_id(GgufMetadata& md, const char* key, const std::optional<int32_t>& id) {
  if (id) md.set(key, GgufValue(static_cast<uint32_t>(*id)));
}

}  // namespace

void write_vocabulary(GgufMetadata& md, const Vocabulary& vocab, uint32_t n_vocab) {
  const bool spm = vocab.kind == VocabularyKind::SentencePiece;
  if (n_vocab != 0 && n_vocab < static_cast<uint32_t>(vocab.size()))
    throw Error(ErrorKind::InvalidValue, "the tokenizer has " + std::to_string(vocab.size()) +
                                             " tokens, more than the model's " + std::to_string(n_vocab));
  std::vector<std::string> tokens = vocab.tokens;
  std::vector<int32_t> types(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    types[id] = static_cast<int32_t>(vocab.types[id]);
    // Ids no token uses (gaps in a tokenizer.json) get a placeholder, as the converter writes them.
    if (tokens[id].empty()) tokens[id] = "[PAD" + std::to_string(id) + "]";
  }
  // Rows of the embedding past the tokenizer's last token: unused placeholders.
  for (size_t id = tokens.size(); id < n_vocab; ++id) {
    tokens.push_back("[PAD" + std::to_string(id) + "]");
    types.push_back(static_cast<int32_t>(TokenType::Unused));
  }
  // Padding never wins a SentencePiece merge: the converter's score for it.
  std::vector<float> scores = vocab.scores;
  if (!scores.empty()) scores.resize(tokens.size(), -10000.0f);
  md.set("tokenizer.ggml.model", GgufValue(spm ? "llama" : "gpt2"));
  md.set("tokenizer.ggml.pre", GgufValue(spm ? std::string("default") : pretokenizer_name(vocab)));
  md.set("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings(std::move(tokens))));
  if (!scores.empty()) md.set("tokenizer.ggml.scores", GgufValue(GgufArray::of(scores)));
  md.set("tokenizer.ggml.token_type", GgufValue(GgufArray::of(types)));
  if (!spm) {
    std::vector<std::string> merges;
    merges.reserve(vocab.merges.size());
    for (const auto& [left, right] : vocab.merges) merges.push_back(left + ' ' + right);
    md.set("tokenizer.ggml.merges", GgufValue(GgufArray::of_strings(std::move(merges))));
  }
  set_id(md, "tokenizer.ggml.bos_token_id", vocab.bos_id);
  set_id(md, "tokenizer.ggml.eos_token_id", vocab.eos_id);
  set_id(md, "tokenizer.ggml.unknown_token_id", vocab.unk_id);
  set_id(md, "tokenizer.ggml.eot_token_id", vocab.eot_id);
  md.set("tokenizer.ggml.add_bos_token", GgufValue(vocab.add_bos));
  if (spm) {
    md.set("tokenizer.ggml.add_space_prefix", GgufValue(vocab.add_dummy_prefix));
    md.set("tokenizer.ggml.remove_extra_whitespaces", GgufValue(vocab.remove_extra_whitespaces));
  }
}

}  // namespace synapse
