// libFuzzer target: encoding arbitrary bytes (special tokens matched or not)
// and decoding the ids must never crash, and every id must be in the
// vocabulary. Byte-level BPE must also give the bytes back exactly.
//
// Tokenizers: synthetic byte-level BPE vocabularies of three pre-tokenizer
// families (through the GGUF loader), a small synthetic SentencePiece one with
// byte fallback, and, when SYNAPSE_FUZZ_SPM_MODEL names a SentencePiece
// .model (run_fuzz.sh passes stories260K's), that one too.
// Input: byte 0 picks the tokenizer and the flags, the rest is the text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "synapse/error.h"
#include "synth/synth_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary_loaders.h"

namespace {

using synapse::Tokenizer;
using synapse::TokenType;
using synapse::Vocabulary;

std::unique_ptr<Tokenizer> synthetic_bpe(const char* family) {
  synapse::GgufMetadata md;
  synapse::synth::write_vocab(md, family, 600);
  return synapse::make_tokenizer(synapse::vocabulary_from_gguf(md));
}

// <unk> <s> </s>, the 256 byte-fallback tokens, "▁", the letters, and
// pieces joining them, scored so that longer pieces merge first.
std::unique_ptr<Tokenizer> synthetic_sentencepiece() {
  Vocabulary v;
  v.kind = synapse::VocabularyKind::SentencePiece;
  const auto add = [&v](std::string text, float score, TokenType type) {
    v.tokens.push_back(std::move(text));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, TokenType::Unknown);
  add("<s>", 0, TokenType::Control);
  add("</s>", 0, TokenType::Control);
  add("<|user|>", 0, TokenType::UserDefined);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0, TokenType::Byte);
  }
  const std::string space = "\xE2\x96\x81";  // ▁
  add(space, -1, TokenType::Normal);
  for (char c = 'a'; c <= 'z'; ++c) add(std::string(1, c), -2, TokenType::Normal);
  for (char c = 'a'; c <= 'z'; ++c) add(space + c, -3, TokenType::Normal);
  for (const char* piece : {"th", "he", "the", "an", "in", "ing"}) add(piece, -4, TokenType::Normal);
  v.unk_id = 0, v.bos_id = 1, v.eos_id = 2;
  v.add_bos = true;
  v.add_dummy_prefix = true;
  v.finalize();
  return synapse::make_tokenizer(std::move(v));
}

std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<Tokenizer>> all;
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* family : {"qwen2", "llama3", "smollm"}) tokenizers().push_back(synthetic_bpe(family));
  tokenizers().push_back(synthetic_sentencepiece());
  if (const char* path = std::getenv("SYNAPSE_FUZZ_SPM_MODEL"); path != nullptr && *path != '\0') {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    tokenizers().push_back(synapse::make_tokenizer(synapse::vocabulary_from_sentencepiece(bytes.str())));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const Tokenizer& tokenizer = *tokenizers()[(control >> 2) % tokenizers().size()];
  const bool parse_special = (control & 1) != 0;
  const bool add_special = (control & 2) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const std::vector<int32_t> ids = tokenizer.encode(text, add_special, parse_special);
    for (int32_t id : ids)
      if (!tokenizer.vocabulary().contains(id)) std::abort();
    const std::string decoded = tokenizer.decode(ids, /*render_special=*/parse_special);
    for (int32_t id : ids) (void)tokenizer.token_to_piece(id, true);
    // Byte-level BPE is lossless: every byte has a token, and special tokens
    // decode to their text when they were matched as text.
    const bool lossless = tokenizer.vocabulary().kind == synapse::VocabularyKind::ByteLevelBpe && !add_special;
    if (lossless && decoded != text) std::abort();
  } catch (const synapse::Error&) {
  }
  return 0;
}
