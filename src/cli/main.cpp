// synapse: the command-line front end (run_cli dispatches the subcommands).
#include "cli/command.h"

int main(int argc, char** argv) { return synapse::cli::run_cli(argc, argv, "synapse"); }
