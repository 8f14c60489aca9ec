// Utf8Stream: token bytes streamed out hold back an unfinished character
// and replace ill-formed bytes with U+FFFD, one per maximal subpart (the
// Unicode recommendation llama.cpp follows); Keep passes exact bytes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8_stream.h"

namespace synapse {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

// Pushes each piece; returns what came out after each push, then the flush.
std::vector<std::string> stream(const std::vector<std::string>& pieces,
                                Utf8Stream::Invalid invalid = Utf8Stream::Invalid::Replace) {
  Utf8Stream s(invalid);
  std::vector<std::string> out;
  for (const std::string& piece : pieces) out.push_back(s.push(piece));
  out.push_back(s.flush());
  return out;
}

TEST(Utf8Stream, HoldsBackACharacterSplitAcrossPiecesUntilItCompletes) {
  // U+20AC (euro) and U+1F600 split byte by byte.
  EXPECT_EQ(stream({"a\xE2", "\x82", "\xAC" "b"}), (std::vector<std::string>{"a", "", "\xE2\x82\xAC" "b", ""}));
  EXPECT_EQ(stream({"\xF0", "\x9F", "\x98", "\x80"}),
            (std::vector<std::string>{"", "", "", "\xF0\x9F\x98\x80", ""}));
}

TEST(Utf8Stream, ByteFallbackTokensOfASynthVocabularyJoinIntoOneCharacter) {
  test::TempDir dir;
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(test::write_tiny_model(dir));
  // The byte-level vocabulary's first 256 tokens are the bytes, in order.
  const std::vector<int32_t> euro = {0xE2, 0x82, 0xAC};
  Utf8Stream s;
  std::string text;
  for (int32_t id : euro) {
    ASSERT_EQ(tokenizer->token_to_piece(id), std::string(1, static_cast<char>(id)));
    const std::string out = s.push(tokenizer->token_to_piece(id));
    if (id != euro.back()) {
      EXPECT_EQ(out, "");
    }
    text += out;
  }
  EXPECT_EQ(text + s.flush(), "\xE2\x82\xAC");
}

TEST(Utf8Stream, LoneContinuationBytesBecomeOneReplacementEach) {
  EXPECT_EQ(valid_utf8("a\x80\xBF" "b"), "a" + kFffd + kFffd + "b");
  EXPECT_EQ(stream({"\x80", "x"}), (std::vector<std::string>{kFffd, "x", ""}));
}

TEST(Utf8Stream, TruncatedSequenceIsReplacedOnceWhenInterruptedOrAtTheEnd) {
  // A 3-byte lead and one continuation, then ASCII: one U+FFFD for both bytes.
  EXPECT_EQ(valid_utf8("\xE2\x82" "a"), kFffd + "a");
  EXPECT_EQ(stream({"ok\xF0\x9F\x98"}), (std::vector<std::string>{"ok", kFffd}));
}

TEST(Utf8Stream, OverlongSurrogateAndTooLargeFormsAreIllFormed) {
  // Overlong '/' (C0 AF): two bytes that never start a character.
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kFffd + kFffd);
  // Overlong 3-byte form of U+0000 (E0 80 80): E0 takes no 80.
  EXPECT_EQ(valid_utf8("\xE0\x80\x80"), kFffd + kFffd + kFffd);
  // Surrogate U+D800 (ED A0 80).
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  // U+110000 (F4 90 80 80) and a F5 lead.
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(valid_utf8("\xF5"), kFffd);
  // The edges that are valid: U+D7FF, U+E000, U+10FFFF.
  for (const std::string ok : {"\xED\x9F\xBF", "\xEE\x80\x80", "\xF4\x8F\xBF\xBF"}) EXPECT_EQ(valid_utf8(ok), ok);
}

TEST(Utf8Stream, KeepPassesTheExactBytesStillJoiningSplitCharacters) {
  EXPECT_EQ(stream({"a\xE2", "\x82\xAC", "\xF6\x80"}, Utf8Stream::Invalid::Keep),
            (std::vector<std::string>{"a", "\xE2\x82\xAC", "\xF6\x80", ""}));
  EXPECT_EQ(stream({"\xF0\x9F"}, Utf8Stream::Invalid::Keep), (std::vector<std::string>{"", "\xF0\x9F"}));
}

}  // namespace
}  // namespace synapse
