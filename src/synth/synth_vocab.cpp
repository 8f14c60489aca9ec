// The synthetic tokenizer. llama.cpp's BPE loader needs a token for every
// byte (it falls back to them) and merges whose parts and results are tokens;
// the merges here grow lower-case words, with and without the GPT-2 space
// marker, one letter at a time, so every merge's left part is an earlier
// result and every result is new.
#include "synth/synth_vocab.h"

#include <vector>

#include "synapse/error.h"

namespace synapse::synth {

namespace {

constexpr int32_t kTokenNormal = 1;
constexpr int32_t kTokenControl = 3;

struct VocabFamily {
  const char* name;
  const char* pre;  // tokenizer.ggml.pre: selects llama.cpp's pre-tokenizer
  std::vector<const char*> specials;
  size_t bos, eos;  // indices into specials
  bool add_bos;
};

const std::vector<VocabFamily>& families() {
  static const std::vector<VocabFamily> kFamilies = {
      {"llama3",
       "llama-bpe",
       {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
        "<|eot_id|>"},
       0,
       1,
       true},
      {"smollm", "smollm", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 0, false},
      {"qwen2", "qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 0, false},
      {"olmo", "olmo", {"<|endoftext|>", "<|padding|>"}, 0, 0, false},
  };
  return kFamilies;
}

const VocabFamily& find_family(const std::string& name) {
  for (const VocabFamily& f : families())
    if (name == f.name) return f;
  throw Error(ErrorKind::InvalidValue, "unknown tokenizer family '" + name + "'");
}

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {  // the byte map stays below U+0800
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others
// for U+0100 onwards in byte order (so ' ' is "Ġ", U+0120).
std::vector<std::string> byte_tokens() {
  std::vector<std::string> tokens(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    tokens[b] = utf8(printable ? b : next++);
  }
  return tokens;
}

}  // namespace

void write_vocab(GgufMetadata& md, const std::string& family_name, uint32_t n_vocab) {
  const VocabFamily& family = find_family(family_name);
  const size_t n_fixed = 256 + family.specials.size();
  if (n_vocab < n_fixed)
    throw Error(ErrorKind::Usage, "n_vocab " + std::to_string(n_vocab) + " is too small: the " +
                                      family.name + " tokenizer needs at least " +
                                      std::to_string(n_fixed) + " (256 byte tokens + " +
                                      std::to_string(family.specials.size()) + " special tokens)");
  const size_t n_merges = n_vocab - n_fixed;

  std::vector<std::string> tokens = byte_tokens();
  tokens.reserve(n_vocab);
  std::vector<std::string> merges;
  merges.reserve(n_merges);

  // Word stems to extend, in the order they become tokens.
  std::vector<std::string> stems = {tokens[' ']};
  for (char c = 'a'; c <= 'z'; ++c) stems.push_back(tokens[static_cast<uint8_t>(c)]);
  for (size_t k = 0; merges.size() < n_merges; ++k) {
    const std::string stem = stems[k];  // a copy: stems grows below
    for (char c = 'a'; c <= 'z' && merges.size() < n_merges; ++c) {
      merges.push_back(stem + ' ' + c);
      tokens.push_back(stem + c);
      stems.push_back(tokens.back());
    }
  }

  std::vector<int32_t> types(tokens.size(), kTokenNormal);
  const auto first_special = static_cast<uint32_t>(tokens.size());
  for (const char* s : family.specials) {
    tokens.emplace_back(s);
    types.push_back(kTokenControl);
  }

  md.set("tokenizer.ggml.model", GgufValue("gpt2"));
  md.set("tokenizer.ggml.pre", GgufValue(family.pre));
  md.set("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings(std::move(tokens))));
  md.set("tokenizer.ggml.token_type", GgufValue(GgufArray::of(types)));
  md.set("tokenizer.ggml.merges", GgufValue(GgufArray::of_strings(std::move(merges))));
  md.set("tokenizer.ggml.bos_token_id", GgufValue(first_special + uint32_t(family.bos)));
  md.set("tokenizer.ggml.eos_token_id", GgufValue(first_special + uint32_t(family.eos)));
  md.set("tokenizer.ggml.add_bos_token", GgufValue(family.add_bos));
}

}  // namespace synapse::synth
