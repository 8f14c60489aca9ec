// Subcommands register themselves here; main() only dispatches. Adding a
// command means adding one file in src/cli/, nothing else.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace synapse::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // bad input file, failed run
inline constexpr int kExitUsage = 2;  // bad flags, missing arguments
inline constexpr int kExitMemory = 3;  // the memory budget cannot hold the request

struct Command {
  const char* name;
  const char* summary;
  // Declares the command's flags on `app`; returns the action to run once
  // the flags are parsed. The action returns an exit code.
  std::function<std::function<int()>(CLI::App& app)> setup;
};

std::vector<Command>& registry();

// Parses argv into one registered command and runs it: its exit code
// (kExitUsage for bad flags). `program` names the binary in messages.
int run_cli(int argc, char** argv, const char* program);

struct Register {
  explicit Register(Command c) { registry().push_back(std::move(c)); }
};

// llama.cpp's flags of several letters after one dash (-md): CLI11 takes one
// letter there, so main() rewrites each registered alias to its long
// option before parsing.
struct DashAlias {
  std::string alias;   // "-md"
  std::string option;  // "--model-draft"
};
std::vector<DashAlias>& dash_aliases();

struct RegisterDashAlias {
  RegisterDashAlias(std::string alias, std::string option) {
    dash_aliases().push_back({std::move(alias), std::move(option)});
  }
};

}  // namespace synapse::cli
