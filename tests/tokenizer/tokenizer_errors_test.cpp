// Inconsistent vocabularies are rejected at load; invalid UTF-8 input is
// encoded (byte fallback / byte-level mapping) and decodes back to its bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "support/temp_dir.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vector_files.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {
namespace {

using test::shared_data;

// A small SentencePiece vocabulary as GGUF metadata.
GgufMetadata spm_metadata() {
  GgufMetadata m;
  m.set("tokenizer.ggml.model", "llama");
  m.set("tokenizer.ggml.tokens", GgufArray::of_strings({"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "b"}));
  m.set("tokenizer.ggml.scores", GgufArray::of<float>({0, 0, 0, -1, -2}));
  m.set("tokenizer.ggml.token_type", GgufArray::of<int32_t>({2, 3, 3, 1, 1}));
  m.set("tokenizer.ggml.bos_token_id", uint32_t{1});
  return m;
}

// Expects `load` to throw Error(InvalidValue) whose text mentions `needle`.
template <typename Load>
void expect_invalid(Load load, const std::string& needle) {
  try {
    load();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TokenizerLoad, SmallGgufVocabularyEncodes) {
  const auto tokenizer = make_tokenizer(vocabulary_from_gguf(spm_metadata()));
  EXPECT_EQ(tokenizer->encode("a", true, false), (std::vector<int32_t>{1, 3}));
}

TEST(TokenizerLoad, UnknownCharacterWithoutByteTokensIsOneUnk) {
  GgufMetadata m = spm_metadata();
  m.set("tokenizer.ggml.unknown_token_id", uint32_t{0});
  EXPECT_EQ(make_tokenizer(vocabulary_from_gguf(m))->encode("a\xC3\xA9", false, false),
            (std::vector<int32_t>{3, 0}));
}

TEST(TokenizerLoad, RejectsScoresOfAnotherLength) {
  GgufMetadata m = spm_metadata();
  m.set("tokenizer.ggml.scores", GgufArray::of<float>({0, 0, 0}));
  expect_invalid([&] { vocabulary_from_gguf(m); }, "3 scores");
}

TEST(TokenizerLoad, RejectsTokenTypesOfAnotherLength) {
  GgufMetadata m = spm_metadata();
  m.set("tokenizer.ggml.token_type", GgufArray::of<int32_t>({2, 3, 3, 1, 1, 1}));
  expect_invalid([&] { vocabulary_from_gguf(m); }, "6 token types");
}

TEST(TokenizerLoad, RejectsUnknownTokenType) {
  GgufMetadata m = spm_metadata();
  m.set("tokenizer.ggml.token_type", GgufArray::of<int32_t>({2, 3, 3, 1, 9}));
  expect_invalid([&] { vocabulary_from_gguf(m); }, "unknown type 9");
}

TEST(TokenizerLoad, RejectsSpecialIdOutsideVocabulary) {
  GgufMetadata m = spm_metadata();
  m.set("tokenizer.ggml.bos_token_id", uint32_t{5});
  expect_invalid([&] { vocabulary_from_gguf(m); }, "special token id 5");
}

TEST(TokenizerLoad, RejectsMergeOfUnknownToken) {
  GgufMetadata m;
  m.set("tokenizer.ggml.model", "gpt2");
  m.set("tokenizer.ggml.tokens", GgufArray::of_strings({"a", "b", "ab"}));
  m.set("tokenizer.ggml.merges", GgufArray::of_strings({"a b", "ab c"}));
  expect_invalid([&] { vocabulary_from_gguf(m); }, "unknown token 'c'");
}

TEST(TokenizerLoad, RejectsUnsupportedPreTokenizer) {
  GgufMetadata m;
  m.set("tokenizer.ggml.model", "gpt2");
  m.set("tokenizer.ggml.tokens", GgufArray::of_strings({"a"}));
  m.set("tokenizer.ggml.pre", "no-such-pre");
  try {
    vocabulary_from_gguf(m);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
}

TEST(TokenizerLoad, RejectsTokenizerJsonIdOutOfRange) {
  const std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 7}, "merges": []},
                               "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}})";
  expect_invalid([&] { vocabulary_from_hf_json(json, ""); }, "'b' has id 7");
}

TEST(TokenizerLoad, RejectsTokenizerJsonMergeOfUnknownToken) {
  const std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "b c"]},
                               "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}})";
  expect_invalid([&] { vocabulary_from_hf_json(json, ""); }, "unknown token 'c'");
}

TEST(TokenizerLoad, RejectsTruncatedSentencePieceModel) {
  const auto path = shared_data("stories260K/tok512.model");
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const std::string bytes = test::read_text_file(path);
  EXPECT_THROW(vocabulary_from_sentencepiece(std::string_view(bytes).substr(0, bytes.size() / 2)), Error);
}

TEST(TokenizerLoad, AFileThatIsNoTokenizerIsNamedWithWhatItIsNot) {
  const test::TempDir dir;
  const std::string path = dir.file("notes.txt");
  std::ofstream(path) << "plain text, not a tokenizer\n";
  expect_invalid([&] { load_tokenizer(path); }, "no tokenizer in " + path + ": not GGUF, tokenizer.json or");
}

// Invalid UTF-8 (stray continuation, truncated sequence, 0xFF) round-trips.
class TokenizerInvalidUtf8 : public testing::TestWithParam<const char*> {};

TEST_P(TokenizerInvalidUtf8, EncodesAndDecodesBackToTheBytes) {
  const auto path = shared_data(GetParam());
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const auto tokenizer = load_tokenizer(path.string());
  for (const std::string text : {"a\x80z", "\xE2\x82", "x\xFF\xFE y", "\xC3(\xF0\x9F\x98 ok"}) {
    const std::vector<int32_t> ids = tokenizer->encode(text, false, false);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tokenizer->decode(ids), text);
  }
}

// SentencePiece stands for spaces with U+2581, so that character in the input
// comes back as a space (as with sentencepiece itself).
std::string expected_decode(const Tokenizer& tokenizer, const std::string& text) {
  if (tokenizer.vocabulary().kind != VocabularyKind::SentencePiece) return text;
  const std::string_view space_symbol = "\xE2\x96\x81";
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (std::string_view(text).substr(i, space_symbol.size()) == space_symbol) {
      out += ' ';
      i += space_symbol.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Random byte strings (ASCII, spaces, multi-byte UTF-8 and invalid bytes mixed)
// round-trip: byte fallback and the byte-level mapping cover every byte.
TEST_P(TokenizerInvalidUtf8, RandomBytesRoundTrip) {
  const auto path = shared_data(GetParam());
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const auto tokenizer = load_tokenizer(path.string());
  std::mt19937 rng(1234);
  const std::vector<std::string> alphabet = {"a", "Z", " ", "  ", "\n", "\t", "7", "'s", "\xC3\xA9", "\xE2\x96\x81",
                                             "\xF0\x9F\xA6\x99", "\x80", "\xFF", "\xE2\x82", "<", "\x00"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int pieces = static_cast<int>(rng() % 12);
    for (int k = 0; k < pieces; ++k) text += alphabet[rng() % alphabet.size()];
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(text, false, false)), expected_decode(*tokenizer, text));
  }
}

INSTANTIATE_TEST_SUITE_P(TokenizerFiles, TokenizerInvalidUtf8,
                         testing::Values("llama2-tokenizer/tokenizer.model", "hf-tokenizers/qwen2_5/tokenizer.json",
                                         "hf-tokenizers/llama3/tokenizer.json"));

TEST(TokenizerSpecial, BosAndControlTokens) {
  const auto llama2 = shared_data("llama2-tokenizer/tokenizer.model");
  const auto qwen = shared_data("hf-tokenizers/qwen2_5/tokenizer.json");
  SYNAPSE_SKIP_UNLESS_SHARED(llama2);
  SYNAPSE_SKIP_UNLESS_SHARED(qwen);
  EXPECT_EQ(load_tokenizer(llama2.string())->encode("Hello", true, false), (std::vector<int32_t>{1, 15043}));
  const auto tokenizer = load_tokenizer(qwen.string());
  EXPECT_EQ(tokenizer->encode("<|im_start|>", false, true), (std::vector<int32_t>{151644}));
  EXPECT_GT(tokenizer->encode("<|im_start|>", false, false).size(), 1u);  // text, not the control token
  EXPECT_TRUE(tokenizer->encode("hi", true, false) == tokenizer->encode("hi", false, false));  // no BOS
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{151644}), "");
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{151644}, true), "<|im_start|>");
}

}  // namespace
}  // namespace synapse
