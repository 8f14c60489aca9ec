// NFC normalization: decomposed text tokenizes as its composed form where the
// tokenizer asks for NFC (Qwen2.5's tokenizer.json), and only there.
#include <gtest/gtest.h>

#include "tokenizer/nfc.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vector_files.h"

namespace synapse {
namespace {

using test::shared_data;

const std::string kComposed = "caf\xC3\xA9 \xC3\x85ngstr\xC3\xB6m";      // café Ångström
const std::string kDecomposed = "cafe\xCC\x81 A\xCC\x8Angstro\xCC\x88m";  // e + U+0301, A + U+030A, o + U+0308

TEST(NfcNormalize, ComposesCombiningMarks) {
  EXPECT_EQ(nfc_normalize(kDecomposed), kComposed);
  EXPECT_EQ(nfc_normalize(kComposed), kComposed);
  EXPECT_EQ(nfc_normalize("plain ascii"), "plain ascii");
}

TEST(NfcNormalize, InvalidBytesPassThroughAndTheRestIsNormalized) {
  EXPECT_EQ(nfc_normalize("\xFF" "e\xCC\x81\xC3"), "\xFF\xC3\xA9\xC3");
  EXPECT_EQ(nfc_normalize("\x80\x80"), "\x80\x80");
}

TEST(NfcTokenizer, QwenDecomposedInputGivesTheComposedIds) {
  const auto path = shared_data("hf-tokenizers/qwen2_5/tokenizer.json");
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const auto qwen = load_tokenizer(path.string());
  ASSERT_TRUE(qwen->vocabulary().normalize_nfc);
  EXPECT_EQ(qwen->encode(kDecomposed, false, false), qwen->encode(kComposed, false, false));
  // Around special tokens too, and decoding gives the composed text.
  const std::string chat = "<|im_start|>" + kDecomposed + "<|im_end|>";
  const std::vector<int32_t> ids = qwen->encode(chat, false, true);
  EXPECT_EQ(ids, qwen->encode("<|im_start|>" + kComposed + "<|im_end|>", false, true));
  EXPECT_EQ(qwen->decode(ids, true), "<|im_start|>" + kComposed + "<|im_end|>");
}

TEST(NfcTokenizer, Llama3HasNoNormalizerAndKeepsDecomposedText) {
  const auto path = shared_data("hf-tokenizers/llama3/tokenizer.json");
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const auto llama3 = load_tokenizer(path.string());
  EXPECT_FALSE(llama3->vocabulary().normalize_nfc);
  EXPECT_NE(llama3->encode(kDecomposed, false, false), llama3->encode(kComposed, false, false));
  EXPECT_EQ(llama3->decode(llama3->encode(kDecomposed, false, false)), kDecomposed);
}

}  // namespace
}  // namespace synapse
