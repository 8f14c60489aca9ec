// Per-tensor type overrides as llama-quantize reads them: PATTERN=TYPE split
// at the first '=', the pattern lower-cased and searched for (not matched)
// in a name, the first match winning; profiles of such items with comments;
// Usage errors that name the flag or the file and line.
#include "quantize/tensor_type_override.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse::quant {
namespace {

// The message of the Usage error `f` throws ("" and a failure otherwise).
std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(TensorTypeOverride, ParsesPatternAndGgmlTypeInAnyCase) {
  const TensorTypeOverride o = parse_tensor_type("blk\\.0\\.attn_v=Q4_K");
  EXPECT_EQ(o.pattern, "blk\\.0\\.attn_v");
  EXPECT_EQ(o.type, Encoding::Q4_K);
  EXPECT_EQ(parse_tensor_type("ffn=bf16").type, Encoding::BF16);
  EXPECT_EQ(parse_tensor_type("ffn=F32").type, Encoding::F32);
}

// llama-quantize lower-cases the pattern (so "\D" means "\d") and splits at
// the first '=', so a type can never contain one.
TEST(TensorTypeOverride, PatternIsLowerCasedAndSplitAtTheFirstEquals) {
  EXPECT_EQ(parse_tensor_type("ATTN_V=q8_0").pattern, "attn_v");
  EXPECT_EQ(parse_tensor_type("blk\\.\\D=q8_0").pattern, "blk\\.\\d");
  EXPECT_NE(usage_error([] { parse_tensor_type("a=b=q8_0"); }).find("unknown type 'b=q8_0'"), std::string::npos);
}

TEST(TensorTypeOverride, FirstPatternFoundAnywhereInTheNameWins) {
  const std::vector<TensorTypeOverride> o = {parse_tensor_type("output=f16"), parse_tensor_type("attn_output=q8_0"),
                                             parse_tensor_type("^blk\\.1\\.=q6_k")};
  const TensorTypeOverride* hit = find_override(o, "blk.0.attn_output.weight");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->type, Encoding::F16);  // "output" is found in it, and comes first
  EXPECT_EQ(find_override(o, "blk.1.attn_q.weight")->type, Encoding::Q6_K);
  EXPECT_EQ(find_override(o, "blk.2.attn_q.weight"), nullptr);
  EXPECT_EQ(find_override({}, "blk.2.attn_q.weight"), nullptr);
}

TEST(TensorTypeOverride, BadItemsAreUsageErrorsNamingWhere) {
  EXPECT_NE(usage_error([] { parse_tensor_type("attn_v"); }).find("--tensor-type: 'attn_v': expected PATTERN=TYPE"),
            std::string::npos);
  EXPECT_NE(usage_error([] { parse_tensor_type("=q8_0"); }).find("missing tensor name"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_tensor_type("attn_v="); }).find("missing type"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_tensor_type("attn_v=q9_0"); }).find("unknown type 'q9_0'"), std::string::npos);
  // A ggml type without an encoder here.
  EXPECT_NE(usage_error([] { parse_tensor_type("attn_v=q2_K"); }).find("cannot encode q2_K"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_tensor_type("blk.(0=q8_0"); }).find("invalid regular expression"),
            std::string::npos);
}

TEST(Profile, ItemsAreSeparatedByBlanksAndNewlinesWithComments) {
  const std::vector<TensorTypeOverride> o = parse_profile(
      "# attention in 8 bits\n"
      "attn_.*=q8_0   ffn_down=q6_K  # the rest\n"
      "\n"
      "\t  ^output\\.weight$=q4_0\r\n"
      "   # indented comment\n"
      "ffn_up=q4_K",
      "p.txt");
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].pattern, "attn_.*");
  EXPECT_EQ(o[1].type, Encoding::Q6_K);
  EXPECT_EQ(o[2].pattern, "^output\\.weight$");
  EXPECT_EQ(o[2].type, Encoding::Q4_0);
  EXPECT_EQ(o[3].type, Encoding::Q4_K);
  EXPECT_TRUE(parse_profile("", "empty").empty());
  EXPECT_TRUE(parse_profile("# nothing\n\n", "comments").empty());
}

TEST(Profile, BadLineIsAUsageErrorNamingFileAndLine) {
  const std::string e = usage_error([] { parse_profile("attn_v=q8_0\n# fine\nffn_down q6_K\n", "p.txt"); });
  EXPECT_NE(e.find("p.txt:3: 'ffn_down': expected PATTERN=TYPE"), std::string::npos) << e;
  EXPECT_NE(usage_error([] { parse_profile("\n\n(=q8_0", "p.txt"); }).find("p.txt:3:"), std::string::npos);
}

TEST(Profile, ReadsAFileAfterTheFlagsAndRefusesAMissingOne) {
  test::TempDir dir;
  std::ofstream(dir.file("p.txt")) << "attn_v=q8_0\n";
  ASSERT_EQ(read_profile(dir.file("p.txt")).size(), 1u);
  const std::vector<std::string> flags = {"attn_q=q4_0", "ffn=q6_k"};
  const std::vector<TensorTypeOverride> all = overrides_from(flags, dir.file("p.txt"));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].pattern, "attn_q");
  EXPECT_EQ(all[2].pattern, "attn_v");
  EXPECT_EQ(overrides_from(flags, "").size(), 2u);
  try {
    read_profile(dir.file("absent.txt"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.subject(), dir.file("absent.txt"));
  }
}

}  // namespace
}  // namespace synapse::quant
