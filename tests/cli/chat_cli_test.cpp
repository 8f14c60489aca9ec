// synapse chat on stdin/stdout: turns reuse the KV state, /reset and /exit
// work, end of input ends the chat, a model without a template falls back
// to ChatML and says so, and replies are valid UTF-8.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "tokenizer/utf8_stream.h"

namespace synapse {
namespace {

constexpr const char* kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

struct TurnStats {
  long prompt, reused, evaluated;
};

// The --stats lines synapse chat writes on stderr, one per reply.
std::vector<TurnStats> turn_stats(const std::string& out) {
  static const std::regex line(R"(prompt (\d+) tokens, (\d+) reused, (\d+) evaluated)");
  std::vector<TurnStats> turns;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    turns.push_back({std::stol((*it)[1]), std::stol((*it)[2]), std::stol((*it)[3])});
  return turns;
}

class ChatCli : public testing::Test {
 protected:
  ChatCli() : model_(test::write_tiny_model(dir_, "qwen2")), template_(dir_.file("chatml.jinja")) {
    std::ofstream(template_) << kChatMl;
  }

  // Runs synapse chat with `input` on stdin; stderr joins stdout.
  test::CommandResult chat(const std::string& input) {
    std::ofstream(dir_.file("input.txt")) << input;
    return test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " chat -m " + test::shell_quote(model_) +
                             " --chat-template " + test::shell_quote(template_) +
                             " -n 4 --temp 0 --stats --system 'Be brief.' < " +
                             test::shell_quote(dir_.file("input.txt")) + " 2>&1");
  }

  test::TempDir dir_;
  std::string model_;
  std::string template_;
};

TEST_F(ChatCli, SecondTurnEvaluatesOnlyTheNewTokens) {
  const test::CommandResult r = chat("Hello\nTell me more\n");  // ends at end of input
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<TurnStats> turns = turn_stats(r.out);
  ASSERT_EQ(turns.size(), 2u) << r.out;
  EXPECT_EQ(turns[0].reused, 0);
  EXPECT_EQ(turns[0].evaluated, turns[0].prompt);
  EXPECT_GE(turns[1].reused, turns[0].prompt);
  EXPECT_LT(turns[1].evaluated, turns[1].prompt);
}

TEST_F(ChatCli, ResetStartsOverAndExitStopsReading) {
  const test::CommandResult r = chat("Hello\n/reset\nHello\n/exit\nnever answered\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<TurnStats> turns = turn_stats(r.out);
  ASSERT_EQ(turns.size(), 2u) << r.out;  // the line after /exit is not read
  EXPECT_EQ(turns[1].reused, 0);
  EXPECT_EQ(turns[1].prompt, turns[0].prompt);
  EXPECT_NE(r.out.find("conversation reset"), std::string::npos);
}

TEST_F(ChatCli, ModelWithoutATemplateFallsBackToChatMlWithANotice) {
  std::ofstream(dir_.file("hello.txt")) << "Hello\n/exit\n";
  const test::CommandResult r =
      test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " chat -m " + test::shell_quote(model_) +
                        " -n 4 --temp 0 --stats --system 'Be brief.' < " +
                        test::shell_quote(dir_.file("hello.txt")) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("no chat template (tokenizer.chat_template); using chatml"), std::string::npos) << r.out;
  EXPECT_EQ(valid_utf8(r.out), r.out) << "the reply is not valid UTF-8";
  // The same prompt as the explicit ChatML template renders, system message included.
  const std::vector<TurnStats> fallback = turn_stats(r.out);
  const std::vector<TurnStats> explicit_chatml = turn_stats(chat("Hello\n/exit\n").out);
  ASSERT_EQ(fallback.size(), 1u) << r.out;
  ASSERT_EQ(explicit_chatml.size(), 1u);
  EXPECT_EQ(fallback[0].prompt, explicit_chatml[0].prompt) << r.out;
}

TEST_F(ChatCli, AGivenTemplateOverridesWithoutTheNotice) {
  const test::CommandResult r = chat("Hello\n");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("no chat template"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace synapse
