// Builtin names, --chat-template NAME|FILE resolution and the GGUF key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "support/command_runner.h"
#include "support/test_files.h"
#include "synapse/error.h"

namespace synapse::chat {
namespace {

const std::filesystem::path kTemplateDir = std::filesystem::path(SYNAPSE_SOURCE_DIR) / "tests/data/chat_templates";

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ChatTemplateBuiltins, EveryBuiltinNameIsTheVerbatimTemplateFile) {
  for (const char* name :
       {"chatml", "llama2", "llama3", "llama3.2", "mistral", "qwen2.5", "qwen3", "smollm2", "tinyllama", "olmoe"}) {
    const auto source = builtin_chat_template(name);
    ASSERT_TRUE(source.has_value()) << name;
    EXPECT_EQ(*source, test::read_text(kTemplateDir / (std::string(name) + ".jinja"))) << name;
    EXPECT_NO_THROW(ChatTemplate::parse(*source)) << name;
  }
}

TEST(ChatTemplateBuiltins, UnknownNameIsNullopt) {
  EXPECT_FALSE(builtin_chat_template("vicuna").has_value());
  EXPECT_FALSE(builtin_chat_template("").has_value());
}

TEST(ChatTemplateResolve, BuiltinNameWins) { EXPECT_EQ(resolve_chat_template("chatml"), *builtin_chat_template("chatml")); }

TEST(ChatTemplateResolve, JinjaFileIsReadVerbatim) {
  const auto path = write_temp("custom.jinja", "{{ messages[0].content }}!\n");
  EXPECT_EQ(resolve_chat_template(path.string()), "{{ messages[0].content }}!\n");
}

TEST(ChatTemplateResolve, TokenizerConfigYieldsItsChatTemplate) {
  const auto path = write_temp("tokenizer_config.json", R"({"bos_token": "<s>", "chat_template": "{{ bos_token }}x"})");
  EXPECT_EQ(resolve_chat_template(path.string()), "{{ bos_token }}x");
}

TEST(ChatTemplateResolve, TokenizerConfigListPicksTheDefaultTemplate) {
  const auto path = write_temp("list_config.json",
                               R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
  EXPECT_EQ(resolve_chat_template(path.string()), "D");
}

TEST(ChatTemplateResolve, JsonWithoutChatTemplateIsMissingKey) {
  const auto path = write_temp("no_template.json", R"({"bos_token": "<s>"})");
  try {
    resolve_chat_template(path.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
  }
}

TEST(ChatTemplateResolve, NeitherNameNorFileIsAUsageErrorListingTheNames) {
  try {
    resolve_chat_template("no-such-template-or-file");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("qwen2.5"), std::string::npos);
  }
}

TEST(ChatTemplateResolve, SharedQwenTokenizerConfigMatchesTheBuiltin) {
  const auto config = test::shared_data("hf-tokenizers/qwen2_5/tokenizer_config.json");
  if (!std::filesystem::exists(config)) GTEST_SKIP() << "shared data absent: " << config;
  EXPECT_EQ(resolve_chat_template(config.string()), *builtin_chat_template("qwen2.5"));
}

TEST(ChatTemplateGguf, ChatTemplateKeyIsExposed) {
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / "chat_template.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue("llama"));
  writer.metadata().set("tokenizer.chat_template", GgufValue("{{ 'hi' }}"));
  writer.write(path.string());
  EXPECT_EQ(chat_template_from_gguf(GgufFile::open(path.string())), "{{ 'hi' }}");
}

TEST(ChatTemplateGguf, AbsentKeyIsNullopt) {
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / "no_chat_template.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue("llama"));
  writer.write(path.string());
  EXPECT_FALSE(chat_template_from_gguf(GgufFile::open(path.string())).has_value());
}

}  // namespace
}  // namespace synapse::chat
