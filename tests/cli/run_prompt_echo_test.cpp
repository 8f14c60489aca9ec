// synapse run prints the prompt before its continuation, as llama.cpp's
// CLI does, unless --no-display-prompt.
#include <gtest/gtest.h>

#include <string>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

TEST(RunPromptEcho, ThePromptComesFirstUnlessNoDisplayPrompt) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "llama");
  const std::vector<std::string> args = {"run", "-m", model, "-p", "hello world", "-n", "8", "--temp", "0", "--ignore-eos"};
  const test::CommandResult echoed = test::run_synapse(args);
  std::vector<std::string> quiet_args = args;
  quiet_args.push_back("--no-display-prompt");
  const test::CommandResult quiet = test::run_synapse(quiet_args);
  ASSERT_EQ(echoed.exit_code, 0) << echoed.out;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(echoed.out.find("hello world"), 0u) << echoed.out;
  EXPECT_EQ(quiet.out.find("hello world"), std::string::npos) << quiet.out;
  EXPECT_EQ(echoed.out, "hello world" + quiet.out);
}

}  // namespace
}  // namespace synapse
