// Every render in tests/data/chat_templates/goldens.json (made by the
// reference JS engine, see scripts/chat_goldens) must come out byte for byte,
// and every render the reference rejected must be rejected too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "support/test_files.h"
#include "synapse/error.h"

namespace synapse::chat {
namespace {

const std::filesystem::path kDataDir = std::filesystem::path(SYNAPSE_SOURCE_DIR) / "tests/data/chat_templates";

nlohmann::json read_json(const std::string& name) { return nlohmann::json::parse(test::read_text(kDataDir / name)); }

TEST(ChatTemplateGoldens, EveryGoldenRendersByteForByteOrRaisesTheSameError) {
  const nlohmann::json spec = read_json("conversations.json");
  const nlohmann::json goldens = read_json("goldens.json");
  std::map<std::string, ChatTemplate> templates;
  size_t renders = 0;
  size_t errors = 0;
  for (const auto& golden : goldens["cases"]) {
    const std::string family = golden["family"];
    const std::string conversation = golden["conversation"];
    SCOPED_TRACE(family + " / " + conversation + " / add_generation_prompt=" +
                 (golden["add_generation_prompt"].get<bool>() ? "true" : "false"));
    if (!templates.count(family)) {
      templates.emplace(family, ChatTemplate::parse(test::read_text(kDataDir / (family + ".jinja"))));
    }
    std::vector<ChatMessage> messages;
    for (const auto& m : spec["conversations"][conversation]) messages.push_back({m["role"], m["content"]});
    RenderOptions options;
    options.add_generation_prompt = golden["add_generation_prompt"];
    options.bos_token = spec["families"][family]["bos_token"];
    options.eos_token = spec["families"][family]["eos_token"];
    options.fixed_date = spec["fixed_date"];
    if (golden.contains("expected")) {
      EXPECT_EQ(templates.at(family).render(messages, options), golden["expected"].get<std::string>());
      ++renders;
    } else {
      const std::string expected_error = golden["error"];
      try {
        templates.at(family).render(messages, options);
        ADD_FAILURE() << "rendered, but the reference raised: " << expected_error;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(expected_error), std::string::npos) << e.what();
      }
      ++errors;
    }
  }
  // Guards against an emptied goldens file passing vacuously.
  EXPECT_GE(renders, 100u);
  EXPECT_GE(errors, 5u);
}

TEST(ChatTemplateGoldens, GoldensCoverEveryBuiltinFamily) {
  const nlohmann::json goldens = read_json("goldens.json");
  for (const char* name : {"chatml", "llama2", "llama3", "mistral", "qwen2.5", "qwen3", "smollm2", "tinyllama", "olmoe"}) {
    bool found = false;
    for (const auto& golden : goldens["cases"]) found = found || golden["family"] == name;
    EXPECT_TRUE(found) << name;
  }
}

}  // namespace
}  // namespace synapse::chat
