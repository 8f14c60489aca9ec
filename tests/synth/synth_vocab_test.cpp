// synth --vocab: a real vocabulary embedded in a synthetic model tokenizes as
// the file it came from, in our tokenizer and in llama.cpp's.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "format/gguf_reader.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vector_files.h"

namespace synapse {
namespace {

using test::shared_data;

struct VocabSource {
  const char* name;
  const char* path;   // under the shared data folder
  const char* model;  // tokenizer.ggml.model expected
};

const VocabSource kSources[] = {
    {"Qwen2_5Json", "hf-tokenizers/qwen2_5/tokenizer.json", "gpt2"},
    {"Llama2Model", "llama2-tokenizer/tokenizer.model", "llama"},
    {"Stories260KModel", "stories260K/tok512.model", "llama"},
};

// Texts without decomposed characters: a tokenizer.json's NFC normalizer has
// no GGUF key, so only NFC text tokenizes alike from both files.
const char* const kTexts[] = {
    "Hello world",
    " leading space and  two spaces",
    "lines\n\nand\ttabs  \n end",
    "numbers 1234567 and 3.14159",
    "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\xA6\x99 emoji",
    "<|im_start|>user\nhi there<|im_end|>\n<s>[INST] x [/INST]",
};

// A small model shape, so embedding a 150k vocabulary stays quick.
SynthOptions small_model_with_vocab(const std::string& vocab_file) {
  SynthOptions o;
  o.preset = "tiny";
  o.type = "q8_0";
  o.n_layer = 1;
  o.n_embd = 64;
  o.n_ff = 64;
  o.vocab_file = vocab_file;
  return o;
}

// The model synth writes for a source, written once for all the tests.
const std::string& synthesized(const std::string& source) {
  static test::TempDir dir;
  static std::map<std::string, std::string> written;
  auto [it, is_new] = written.emplace(source, dir.file("vocab" + std::to_string(written.size()) + ".gguf"));
  if (is_new) synth_model(small_model_with_vocab(source), it->second);
  return it->second;
}

class SynthVocabFrom : public testing::TestWithParam<VocabSource> {};

TEST_P(SynthVocabFrom, GgufTokenizesLikeTheSourceFile) {
  const auto source = shared_data(GetParam().path);
  SYNAPSE_SKIP_UNLESS_SHARED(source);
  const std::string& gguf = synthesized(source.string());

  const auto from_source = load_tokenizer(source.string());
  const auto from_gguf = load_tokenizer(gguf);
  const GgufFile file = GgufFile::open(gguf);
  const GgufMetadata& md = file.metadata();
  EXPECT_EQ(md.get_string("tokenizer.ggml.model"), GetParam().model);
  EXPECT_EQ(md.get_array("tokenizer.ggml.tokens").size(), static_cast<size_t>(from_source->vocabulary().size()));
  EXPECT_EQ(md.find("llama.vocab_size")->as_int(), from_source->vocabulary().size());
  EXPECT_EQ(from_gguf->vocabulary().tokens, from_source->vocabulary().tokens);
  EXPECT_EQ(from_gguf->vocabulary().bos_id, from_source->vocabulary().bos_id);
  EXPECT_EQ(from_gguf->vocabulary().eos_id, from_source->vocabulary().eos_id);
  for (const char* text : kTexts) {
    for (bool parse_special : {false, true}) {
      EXPECT_EQ(from_gguf->encode(text, true, parse_special), from_source->encode(text, true, parse_special))
          << "text '" << text << "', parse_special " << parse_special;
    }
  }
}

TEST_P(SynthVocabFrom, LlamaCppTokenizesTheGgufLikeUs) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const auto source = shared_data(GetParam().path);
  SYNAPSE_SKIP_UNLESS_SHARED(source);
  const std::string& gguf = synthesized(source.string());
  const auto ours = load_tokenizer(gguf);
  for (const std::string text : kTexts) {
    // llama.cpp ignores SentencePiece's remove_extra_whitespaces (stories260K
    // sets it): there only text without leading, trailing or repeated spaces
    // tokenizes alike.
    const bool extra_spaces = text.front() == ' ' || text.back() == ' ' || text.find("  ") != std::string::npos;
    if (ours->vocabulary().remove_extra_whitespaces && extra_spaces) continue;
    // Each run loads the vocabulary: special tokens unmatched only where there are some.
    const bool has_special = text.find("<|") != std::string::npos;
    for (bool parse_special : {true, false}) {
      if (!parse_special && !has_special) continue;
      std::vector<std::string> args = {"tokenize", gguf, text};
      if (parse_special) args.push_back("--parse-special");
      const test::CommandResult peer = test::run_peer(args);
      ASSERT_EQ(peer.exit_code, 0) << peer.out;
      EXPECT_EQ(nlohmann::json::parse(peer.out).get<std::vector<int32_t>>(), ours->encode(text, true, parse_special))
          << "text '" << text << "', parse_special " << parse_special;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SynthVocab, SynthVocabFrom, testing::ValuesIn(kSources),
                         [](const testing::TestParamInfo<VocabSource>& info) { return info.param.name; });

TEST(SynthVocabOptions, NVocabThatDisagreesWithTheVocabularyIsAUsageError) {
  const auto source = shared_data("stories260K/tok512.model");
  SYNAPSE_SKIP_UNLESS_SHARED(source);
  test::TempDir dir;
  SynthOptions o = small_model_with_vocab(source.string());
  o.n_vocab = 1000;
  try {
    synth_model(o, dir.file("x.gguf"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

}  // namespace
}  // namespace synapse
