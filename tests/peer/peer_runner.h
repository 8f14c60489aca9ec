// Helpers for tests that run synapse-peer (the llama.cpp harness) or other
// programs: run a command, capture its stdout and exit code; find out whether
// the peer's libraries are installed; locate the shared test data.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

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

// Runs synapse-peer with `args` (each quoted).
inline CommandResult run_peer(const std::vector<std::string>& args) {
  std::string command = shell_quote(SYNAPSE_PEER_PATH);
  for (const auto& arg : args) {
    command += ' ';
    command += shell_quote(arg);
  }
  return run_command(command);
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

// A file under the shared test data folder (next to the repository).
inline std::filesystem::path shared_data(const std::string& relative) {
  return std::filesystem::path(SYNAPSE_SOURCE_DIR) / ".." / "shared" / "data" / relative;
}

}  // namespace synapse::test

// Skips the current test when the llama.cpp peer is not installed.
#define SYNAPSE_SKIP_UNLESS_PEER()                                            \
  do {                                                                        \
    if (!::synapse::test::peer_available()) {                                 \
      GTEST_SKIP() << "llama.cpp peer not installed (bench/peer/install.sh)"; \
    }                                                                         \
  } while (0)
