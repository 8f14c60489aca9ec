// A vocabulary written as tokenizer.ggml.* reads back as the same
// vocabulary, padded with unused "[PADn]" tokens up to the model's
// embedding rows as llama.cpp's converter pads it.
#include <gtest/gtest.h>

#include "support/shared_data.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary_loaders.h"
#include "tokenizer/vocabulary_writer.h"

namespace synapse {
namespace {

TEST(VocabularyWriter, SentencePieceReadsBackPaddedToTheEmbeddingRows) {
  const auto model = test::shared_data("stories260K/tok512.model");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "shared test data " << model << " is absent";
  const Vocabulary vocab = load_tokenizer(model.string())->vocabulary();
  GgufMetadata md;
  write_vocabulary(md, vocab, static_cast<uint32_t>(vocab.size()) + 3);
  EXPECT_EQ(md.get_string("tokenizer.ggml.model"), "llama");
  const Vocabulary back = vocabulary_from_gguf(md);
  ASSERT_EQ(back.size(), vocab.size() + 3);
  for (int32_t id = 0; id < vocab.size(); ++id) {
    EXPECT_EQ(back.tokens[id], vocab.tokens[id]);
    EXPECT_EQ(back.type(id), vocab.type(id));
    EXPECT_EQ(back.score(id), vocab.score(id));
  }
  EXPECT_EQ(back.tokens[vocab.size() + 2], "[PAD" + std::to_string(vocab.size() + 2) + "]");
  EXPECT_EQ(back.type(vocab.size() + 2), TokenType::Unused);
  EXPECT_EQ(back.bos_id, vocab.bos_id);
  EXPECT_EQ(back.eos_id, vocab.eos_id);
}

TEST(VocabularyWriter, MoreTokensThanEmbeddingRowsIsRefused) {
  const auto model = test::shared_data("stories260K/tok512.model");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "shared test data " << model << " is absent";
  const Vocabulary vocab = load_tokenizer(model.string())->vocabulary();
  GgufMetadata md;
  try {
    write_vocabulary(md, vocab, 100);
    FAIL() << "512 tokens written for 100 rows";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
  }
}

}  // namespace
}  // namespace synapse
