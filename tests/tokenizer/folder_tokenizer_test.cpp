// A Hugging Face folder's tokenizer: tokenizer.model with the tokens the
// folder adds (added_tokens.json, tokenizer_config.json's
// added_tokens_decoder), merged as llama.cpp's converter merges them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/shared_data.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse {
namespace {

TEST(FolderTokenizer, SentencePieceGetsTheFoldersAddedTokens) {
  const auto model = test::shared_data("stories260K/tok512.model");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "shared test data " << model << " is absent";
  const test::TempDir dir;
  std::filesystem::copy_file(model, dir.file("tokenizer.model"));
  std::ofstream(dir.file("tokenizer_config.json"))
      << R"({"added_tokens_decoder": {"513": {"content": "<|im_end|>", "special": true},
                                      "512": {"content": "<|im_start|>", "special": true}}})";
  std::ofstream(dir.file("added_tokens.json")) << R"({"<tool>": 515})";
  const auto tokenizer = load_tokenizer(dir.file(""));
  const Vocabulary& vocab = tokenizer->vocabulary();
  ASSERT_EQ(vocab.size(), 516);
  EXPECT_EQ(vocab.tokens[512], "<|im_start|>");
  EXPECT_EQ(vocab.type(512), TokenType::Control);
  EXPECT_EQ(vocab.tokens[514], "[PAD514]");
  EXPECT_EQ(vocab.type(514), TokenType::Unused);
  EXPECT_EQ(vocab.type(515), TokenType::UserDefined);
  const std::vector<int32_t> ids = tokenizer->encode("<|im_start|>Once<|im_end|>", false, true);
  EXPECT_EQ(ids.front(), 512);
  EXPECT_EQ(ids.back(), 513);
  EXPECT_EQ(tokenizer->encode("<tool>", false, false), std::vector<int32_t>{515});

  std::ofstream(dir.file("added_tokens.json")) << R"({"<huge>": 99999999999})";
  EXPECT_THROW(load_tokenizer(dir.file("")), Error);
}

}  // namespace
}  // namespace synapse
