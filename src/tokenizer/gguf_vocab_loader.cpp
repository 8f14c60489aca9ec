#include "synapse/error.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {

namespace {

// Patterns as llama.cpp and Hugging Face define them for each pre-tokenizer.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// Llama 3 and Qwen 2 differ only in how many digits one word takes.
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_llama3(const std::string& pre) { return pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3"; }

std::optional<int32_t> optional_id(const GgufMetadata& m, const std::string& key) {
  const GgufValue* v = m.find(key);
  if (v == nullptr) return std::nullopt;
  return static_cast<int32_t>(v->as_int());
}

bool optional_bool(const GgufMetadata& m, const std::string& key, bool fallback) {
  const GgufValue* v = m.find(key);
  return v == nullptr ? fallback : v->as_bool();
}

TokenType token_type_from(int64_t value, size_t index) {
  if (value < 1 || value > 6) {
    throw Error(ErrorKind::InvalidValue,
                "token " + std::to_string(index) + " has unknown type " + std::to_string(value), Error::kNoOffset,
                "tokenizer.ggml.token_type");
  }
  return static_cast<TokenType>(value);
}

}  // namespace

std::vector<std::string> pretokenizer_patterns_for(const std::string& pre) {
  for (const char* name : {"default", "gpt2", "gpt-2", "mpt", "olmo", "jais", "trillion"}) {
    if (pre == name) return {kGpt2Pattern};
  }
  // Digits split off one by one first, then GPT-2's pattern.
  for (const char* name : {"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"}) {
    if (pre == name) return {R"(\p{N})", kGpt2Pattern};
  }
  if (is_llama3(pre)) return {kLlama3Pattern};
  if (pre == "qwen2" || pre == "stablelm2") return {kQwen2Pattern};
  throw Error(ErrorKind::Unsupported, "unknown pre-tokenizer '" + pre + "'", Error::kNoOffset, "tokenizer.ggml.pre");
}

Vocabulary vocabulary_from_gguf(const GgufMetadata& m) {
  Vocabulary v;
  const std::string& model = m.get_string("tokenizer.ggml.model");
  if (model == "llama") {
    v.kind = VocabularyKind::SentencePiece;
  } else if (model == "gpt2") {
    v.kind = VocabularyKind::ByteLevelBpe;
  } else {
    throw Error(ErrorKind::Unsupported, "tokenizer model '" + model + "'", Error::kNoOffset, "tokenizer.ggml.model");
  }
  const GgufArray& tokens = m.get_array("tokenizer.ggml.tokens");
  for (size_t i = 0; i < tokens.size(); ++i) v.tokens.push_back(tokens.string_at(i));
  if (m.contains("tokenizer.ggml.scores")) {
    const GgufArray& scores = m.get_array("tokenizer.ggml.scores");
    for (size_t i = 0; i < scores.size(); ++i) v.scores.push_back(static_cast<float>(scores.double_at(i)));
  }
  if (m.contains("tokenizer.ggml.token_type")) {
    const GgufArray& types = m.get_array("tokenizer.ggml.token_type");
    for (size_t i = 0; i < types.size(); ++i) v.types.push_back(token_type_from(types.int_at(i), i));
  }
  if (m.contains("tokenizer.ggml.merges")) {
    const GgufArray& merges = m.get_array("tokenizer.ggml.merges");
    for (size_t i = 0; i < merges.size(); ++i) {
      const std::string& merge = merges.string_at(i);
      const size_t space = merge.find(' ', 1);
      if (space == std::string::npos) {
        throw Error(ErrorKind::InvalidValue, "merge " + std::to_string(i) + " '" + merge + "' is not two pieces",
                    Error::kNoOffset, "tokenizer.ggml.merges");
      }
      v.merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
    }
  }
  v.bos_id = optional_id(m, "tokenizer.ggml.bos_token_id");
  v.eos_id = optional_id(m, "tokenizer.ggml.eos_token_id");
  v.unk_id = optional_id(m, "tokenizer.ggml.unknown_token_id");
  v.eot_id = optional_id(m, "tokenizer.ggml.eot_token_id");
  const bool spm = v.kind == VocabularyKind::SentencePiece;
  v.add_bos = optional_bool(m, "tokenizer.ggml.add_bos_token", spm);
  if (spm) {
    v.add_dummy_prefix = optional_bool(m, "tokenizer.ggml.add_space_prefix", true);
    v.remove_extra_whitespaces = optional_bool(m, "tokenizer.ggml.remove_extra_whitespaces", false);
  } else {
    const GgufValue* pre = m.find("tokenizer.ggml.pre");
    const std::string pre_name = pre ? pre->as_string() : "default";
    v.pretokenizer_patterns = pretokenizer_patterns_for(pre_name);
    v.ignore_merges = is_llama3(pre_name);
  }
  v.finalize();
  return v;
}

}  // namespace synapse
