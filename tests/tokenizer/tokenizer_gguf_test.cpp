// GGUF vocabularies (tokenizer.ggml.*): SentencePiece from stories260K, and
// byte-level BPE written from a tokenizer.json's vocabulary (the shared
// llama.cpp vocab GGUFs are unreadable), checked against llama.cpp's vectors.
#include <gtest/gtest.h>

#include "synth/synth_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vector_files.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {
namespace {

using test::shared_data;

// The GGUF metadata llama.cpp's converter writes for a byte-level vocabulary.
GgufMetadata bpe_metadata(const Vocabulary& v, const std::string& pre) {
  GgufMetadata m;
  m.set("tokenizer.ggml.model", "gpt2");
  m.set("tokenizer.ggml.pre", pre);
  m.set("tokenizer.ggml.tokens", GgufArray::of_strings(v.tokens));
  std::vector<int32_t> types;
  for (TokenType t : v.types) types.push_back(static_cast<int32_t>(t));
  m.set("tokenizer.ggml.token_type", GgufArray::of(types));
  std::vector<std::string> merges;
  for (const auto& [left, right] : v.merges) merges.push_back(left + " " + right);
  m.set("tokenizer.ggml.merges", GgufArray::of_strings(merges));
  return m;
}

TEST(TokenizerGguf, SentencePieceVocabularyMatchesModelFile) {
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

struct GgufBpeCase {
  const char* json;
  const char* pre;
  const char* vectors;
};

class TokenizerGgufBpe : public testing::TestWithParam<GgufBpeCase> {};

TEST_P(TokenizerGgufBpe, MatchesLlamaCppVectors) {
  const auto json = shared_data(GetParam().json);
  const auto vectors_path = shared_data(GetParam().vectors);
  SYNAPSE_SKIP_UNLESS_SHARED(json);
  SYNAPSE_SKIP_UNLESS_SHARED(vectors_path);
  const auto tokenizer = make_tokenizer(
      vocabulary_from_gguf(bpe_metadata(load_tokenizer(json.string())->vocabulary(), GetParam().pre)));
  for (const auto& v : test::read_llamacpp_vectors(vectors_path)) {
    EXPECT_EQ(tokenizer->encode(v.text, false, false), v.ids) << "text: '" << v.text << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(
    TokenizerGgufBpe, TokenizerGgufBpe,
    testing::Values(GgufBpeCase{"hf-tokenizers/qwen2_5/tokenizer.json", "qwen2", "llamacpp-vocab/ggml-vocab-qwen2.gguf.inp"},
                    GgufBpeCase{"hf-tokenizers/llama3/tokenizer.json", "llama-bpe",
                                "llamacpp-vocab/ggml-vocab-llama-bpe.gguf.inp"}));

// The synthetic vocabularies synapse synth writes load, and every text round-trips.
class TokenizerSynthVocab : public testing::TestWithParam<const char*> {};

TEST_P(TokenizerSynthVocab, LoadsAndRoundTrips) {
  GgufMetadata m;
  synth::write_vocab(m, GetParam(), 600);
  const auto tokenizer = make_tokenizer(vocabulary_from_gguf(m));
  const Vocabulary& v = tokenizer->vocabulary();
  for (const std::string text : {"hello world", "Zebra 12345  x\n\n", "caf\xC3\xA9 \xF0\x9F\xA6\x99!", "\xFF\x80"}) {
    const std::vector<int32_t> ids = tokenizer->encode(text, true, true);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front() == *v.bos_id, v.add_bos) << text;
    EXPECT_EQ(tokenizer->decode(ids), text);
  }
  // The control token's text is one token when parsed as special.
  const std::string eos = v.tokens[static_cast<size_t>(*v.eos_id)];
  EXPECT_EQ(tokenizer->encode(eos, false, true), std::vector<int32_t>{*v.eos_id});
}

INSTANTIATE_TEST_SUITE_P(TokenizerSynth, TokenizerSynthVocab, testing::Values("llama3", "smollm", "qwen2", "olmo"));

TEST(TokenizerGguf, SmollmSplitsDigitsOneByOne) {
  GgufMetadata m;
  synth::write_vocab(m, "smollm", 600);
  const auto smollm = make_tokenizer(vocabulary_from_gguf(m));
  const auto ids = smollm->encode(" 123", false, false);
  // " " then "1", "2", "3": the digits split off before GPT-2's " ?\p{N}+".
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(smollm->token_to_piece(ids[0]), " ");
  EXPECT_EQ(smollm->token_to_piece(ids[1]), "1");
}

}  // namespace
}  // namespace synapse
