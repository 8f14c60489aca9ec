// The README's "Common tasks" block, command by command, on a synthetic
// model, so the commands a new user copies keep working. MODEL.gguf becomes
// the model's path; the llama.cpp peer's command is skipped, saying so,
// when the peer is not installed.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

// The commands of the ```sh block after the README's <!-- common-tasks marker
// (comment and blank lines dropped).
std::vector<std::string> common_task_commands() {
  std::ifstream in(std::string(SYNAPSE_SOURCE_DIR) + "/README.md");
  std::string line;
  while (std::getline(in, line) && line.rfind("<!-- common-tasks", 0) != 0) {
  }
  while (std::getline(in, line) && line.rfind("```", 0) != 0) {
  }
  std::vector<std::string> commands;
  while (std::getline(in, line) && line.rfind("```", 0) != 0)
    if (!line.empty() && line[0] != '#') commands.push_back(line);
  return commands;
}

// `command` with MODEL.gguf and the build/ programs replaced.
std::string runnable(std::string command, const std::string& model) {
  for (size_t at; (at = command.find("MODEL.gguf")) != std::string::npos;)
    command.replace(at, 10, test::shell_quote(model));
  const std::string cli = "build/synapse ", peer = "build/bench/peer/synapse-peer ";
  if (command.rfind(cli, 0) == 0) return test::shell_quote(SYNAPSE_CLI_PATH) + " " + command.substr(cli.size());
  if (command.rfind(peer, 0) == 0) return test::shell_quote(SYNAPSE_PEER_PATH) + " " + command.substr(peer.size());
  ADD_FAILURE() << "a common task that runs neither build/synapse nor the peer: " << command;
  return "false";
}

TEST(ReadmeCommonTasks, EveryCommandRunsOnASynthModel) {
  const std::vector<std::string> commands = common_task_commands();
  ASSERT_GE(commands.size(), 7u) << "the README's common-tasks block was not found or lost commands";
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir);  // no chat template: chat falls back to ChatML
  std::ofstream(dir.file("chat-input.txt")) << "Hello\n/exit\n";
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    if (command.rfind("build/bench/peer/", 0) == 0 && !test::peer_available()) {
      std::cout << "[ SKIPPING ] llama.cpp peer not installed (bench/peer/install.sh): " << command << "\n";
      continue;
    }
    const bool chat = command.find("synapse chat") != std::string::npos;
    const std::string input = chat ? test::shell_quote(dir.file("chat-input.txt")) : "/dev/null";
    // In the temporary folder, where the commands write their files.
    const test::CommandResult r = test::run_command("cd " + test::shell_quote(dir.file("")) + " && " +
                                                    runnable(command, model) + " < " + input + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.out;
  }
}

}  // namespace
}  // namespace synapse
