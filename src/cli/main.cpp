// synapse: command-line front end. Each subcommand lives in its own file.
#include <cstdio>
#include <exception>
#include <map>

#include "cli/command.h"
#include "synapse/error.h"

namespace synapse::cli {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace synapse::cli

int main(int argc, char** argv) {
  using namespace synapse::cli;
  CLI::App app{"synapse: run large language models on the CPU, region by region"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "synapse 0.1.0");
  std::map<CLI::App*, std::function<int()>> actions;
  for (auto& c : registry()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    actions[sub] = c.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "synapse: usage error: %s\n", e.what());
    std::fprintf(stderr, "run 'synapse --help' for usage\n");
    return kExitUsage;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const synapse::Error& e) {
      std::fprintf(stderr, "synapse %s: error: %s\n", sub->get_name().c_str(), e.what());
      if (e.kind() == synapse::ErrorKind::InsufficientMemory) return kExitMemory;
      return e.kind() == synapse::ErrorKind::Usage ? kExitUsage : kExitError;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "synapse %s: error: %s\n", sub->get_name().c_str(), e.what());
      return kExitError;
    }
  }
  return kExitUsage;
}
