// Encodes the shared test vectors and compares with the reference ids; checks
// decode(encode(x)) == x on every input. SentencePiece's dummy prefix is
// dropped again by decode, so the text compared is the input itself, except
// for models with remove_extra_whitespaces (tok512), whose normalized text is
// the input with leading/trailing spaces trimmed and runs of spaces collapsed.
#include <gtest/gtest.h>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vector_files.h"

namespace synapse {
namespace {

using test::shared_data;

std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct VectorCase {
  const char* name;
  const char* tokenizer;  // relative to the shared data folder
  const char* vectors;    // .jsonl or llama.cpp .inp
  bool parse_special;
  // stories260K's GGUF lacks tokenizer.ggml.remove_extra_whitespaces, which
  // its tok512.model sets (and sentencepiece applied to make the vectors).
  bool remove_extra_whitespaces = false;
};

void PrintTo(const VectorCase& c, std::ostream* os) { *os << c.name; }

class TokenizerVectors : public testing::TestWithParam<VectorCase> {};

TEST_P(TokenizerVectors, EncodeMatchesReferenceAndRoundTrips) {
  const VectorCase& c = GetParam();
  const auto tokenizer_path = shared_data(c.tokenizer);
  const auto vectors_path = shared_data(c.vectors);
  SYNAPSE_SKIP_UNLESS_SHARED(tokenizer_path);
  SYNAPSE_SKIP_UNLESS_SHARED(vectors_path);
  std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(tokenizer_path.string());
  if (c.remove_extra_whitespaces) {
    Vocabulary vocabulary = tokenizer->vocabulary();
    vocabulary.remove_extra_whitespaces = true;
    tokenizer = make_tokenizer(std::move(vocabulary));
  }
  const auto vectors = vectors_path.extension() == ".inp" ? test::read_llamacpp_vectors(vectors_path)
                                                          : test::read_jsonl_vectors(vectors_path);
  ASSERT_GT(vectors.size(), 40u);
  size_t matched = 0;
  for (const auto& v : vectors) {
    const std::vector<int32_t> ids = tokenizer->encode(v.text, /*add_special=*/false, c.parse_special);
    EXPECT_EQ(ids, v.ids) << "text: '" << v.text << "'";
    matched += ids == v.ids;
    const std::string expected_text =
        tokenizer->vocabulary().remove_extra_whitespaces ? collapse_spaces(v.text) : v.text;
    EXPECT_EQ(tokenizer->decode(ids, /*render_special=*/c.parse_special), expected_text);
  }
  std::cout << c.name << ": " << matched << "/" << vectors.size() << " vectors match\n";
}

INSTANTIATE_TEST_SUITE_P(
    TokenizerSpm, TokenizerVectors,
    testing::Values(
        VectorCase{"llama2_spm_jsonl", "llama2-tokenizer/tokenizer.model",
                   "tokenizer-vectors/llama2-spm.sentencepiece-0.1.97.jsonl", false},
        VectorCase{"llama2_spm_llamacpp", "llama2-tokenizer/tokenizer.model",
                   "llamacpp-vocab/ggml-vocab-llama-spm.gguf.inp", false},
        VectorCase{"tok512_jsonl", "stories260K/tok512.model",
                   "tokenizer-vectors/tok512-spm.sentencepiece-0.1.97.jsonl", false},
        VectorCase{"tok512_gguf_jsonl", "gguf/stories260K-f32.gguf",
                   "tokenizer-vectors/tok512-spm.sentencepiece-0.1.97.jsonl", false, true},
        VectorCase{"llama2_tiny_gguf_jsonl", "gguf/llama-2-tiny-random.gguf",
                   "tokenizer-vectors/llama2-spm.sentencepiece-0.1.97.jsonl", false}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    TokenizerBpe, TokenizerVectors,
    testing::Values(
        VectorCase{"qwen2_llamacpp", "hf-tokenizers/qwen2_5/tokenizer.json",
                   "llamacpp-vocab/ggml-vocab-qwen2.gguf.inp", false},
        VectorCase{"llama_bpe_llamacpp", "hf-tokenizers/llama3/tokenizer.json",
                   "llamacpp-vocab/ggml-vocab-llama-bpe.gguf.inp", false},
        VectorCase{"qwen2_5_lenml", "hf-tokenizers/qwen2_5/tokenizer.json",
                   "tokenizer-vectors/qwen2_5.lenml-tokenizers-3.7.2.jsonl", true},
        VectorCase{"qwen3_lenml", "hf-tokenizers/qwen3/tokenizer.json",
                   "tokenizer-vectors/qwen3.lenml-tokenizers-3.7.2.jsonl", true},
        VectorCase{"llama3_lenml", "hf-tokenizers/llama3/tokenizer.json",
                   "tokenizer-vectors/llama3.lenml-tokenizers-3.7.2.jsonl", true}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace synapse
