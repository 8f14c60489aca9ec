// Inconsistent vocabularies are rejected at load; invalid UTF-8 input is
// encoded (byte fallback / byte-level mapping) and decodes back to its bytes.
#include <gtest/gtest.h>

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

TEST(TokenizerLoad, RejectsTruncatedSentencePieceModel) {
  const auto path = shared_data("stories260K/tok512.model");
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const std::string bytes = test::read_text_file(path);
  EXPECT_THROW(vocabulary_from_sentencepiece(std::string_view(bytes).substr(0, bytes.size() / 2)), Error);
}

TEST(TokenizerLoad, GgufVocabularyMatchesSentencePieceModel) {
  const auto gguf = shared_data("gguf/stories260K-f32.gguf");
  const auto model = shared_data("stories260K/tok512.model");
  SYNAPSE_SKIP_UNLESS_SHARED(gguf);
  SYNAPSE_SKIP_UNLESS_SHARED(model);
  const auto from_gguf = load_tokenizer(gguf.string());
  const auto from_model = load_tokenizer(model.string());
  EXPECT_EQ(from_gguf->vocabulary().tokens, from_model->vocabulary().tokens);
  EXPECT_EQ(from_gguf->vocabulary().scores, from_model->vocabulary().scores);
  EXPECT_EQ(from_gguf->vocabulary().types, from_model->vocabulary().types);
  EXPECT_EQ(from_gguf->encode("Once upon a time", true, false), from_model->encode("Once upon a time", true, false));
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
