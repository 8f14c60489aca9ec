// Helpers for tests that run the CLI, synapse-peer (the llama.cpp harness) or other
// programs: run a command, capture its stdout and exit code; find out whether
// the peer's libraries are installed (and, through shared_data.h, where
// the shared test data is).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/shared_data.h"

namespace synapse::test {

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;     // stdout; stderr goes to the test's own stderr
};

// Quotes `arg` for /bin/sh.
inline std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

// Runs `command` with /bin/sh and waits for it.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// Runs `program` with `args` (each quoted); stderr joins stdout when asked.
inline CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                                 bool with_stderr = false) {
  std::string command = shell_quote(program);
  for (const auto& arg : args) {
    command += ' ';  // not " " + quoted: GCC 12 warns falsely (-Wrestrict) on that form
    command += shell_quote(arg);
  }
  if (with_stderr) command += " 2>&1";
  return run_command(command);
}

// Runs synapse-peer with `args`.
inline CommandResult run_peer(const std::vector<std::string>& args) {
  return run_program(SYNAPSE_PEER_PATH, args);
}

// Runs the synapse CLI with `args`.
inline CommandResult run_synapse(const std::vector<std::string>& args, bool with_stderr = false) {
  return run_program(SYNAPSE_CLI_PATH, args, with_stderr);
}

// Exit code of synapse-peer when its libraries are missing.
inline constexpr int kPeerExitNoLibrary = 3;

// False when synapse-peer cannot find the llama.cpp libraries (not installed
// with bench/peer/install.sh <build>/peer, nor named by SYNAPSE_PEER_LIB).
inline bool peer_available() {
  static const bool available =
      run_command(shell_quote(SYNAPSE_PEER_PATH) + " selftest >/dev/null 2>&1").exit_code !=
      kPeerExitNoLibrary;
  return available;
}

}  // namespace synapse::test

// Skips the current test when the llama.cpp peer is not installed.
#define SYNAPSE_SKIP_UNLESS_PEER()                                            \
  do {                                                                        \
    if (!::synapse::test::peer_available()) {                                 \
      GTEST_SKIP() << "llama.cpp peer not installed (bench/peer/install.sh)"; \
    }                                                                         \
  } while (0)
