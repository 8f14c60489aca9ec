// The command-line front end's dispatch: each subcommand lives in its own
// file; synapse (main.cpp) and synapse-mpi (dist/mpi/) call run_cli.
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "synapse/error.h"

namespace synapse::cli {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

std::vector<DashAlias>& dash_aliases() {
  static std::vector<DashAlias> aliases;
  return aliases;
}

namespace {

// argv with every registered dash alias (before a "--") spelled as its long
// option.
std::vector<std::string> expand_dash_aliases(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "--") break;
    for (const DashAlias& a : dash_aliases())
      if (arg == a.alias) arg = a.option;
  }
  return args;
}

}  // namespace
}  // namespace synapse::cli

int synapse::cli::run_cli(int argc, char** argv, const char* program) {
  using namespace synapse::cli;
  CLI::App app{std::string(program) + ": run large language models on the CPU, region by region"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "synapse 0.1.0");
  std::map<CLI::App*, std::function<int()>> actions;
  for (auto& c : registry()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    actions[sub] = c.setup(*sub);
  }
  const std::vector<std::string> args = expand_dash_aliases(argc, argv);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args) arg_ptrs.push_back(a.c_str());
  try {
    app.parse(argc, arg_ptrs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: usage error: %s\n", program, e.what());
    std::fprintf(stderr, "run '%s --help' for usage\n", program);
    return kExitUsage;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const synapse::Error& e) {
      std::fprintf(stderr, "%s %s: error: %s\n", program, sub->get_name().c_str(), e.what());
      if (e.kind() == synapse::ErrorKind::InsufficientMemory) return kExitMemory;
      return e.kind() == synapse::ErrorKind::Usage ? kExitUsage : kExitError;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: error: %s\n", program, sub->get_name().c_str(), e.what());
      return kExitError;
    }
  }
  return kExitUsage;
}
