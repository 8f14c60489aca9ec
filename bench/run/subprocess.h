// Runs a program and waits for it: its stdout captured, its stderr kept in
// a temporary file (so neither pipe can fill up and stall it).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace synapse::bench {

struct ProcessResult {
  int exit_code = -1;  // 128 + N when signal N ended it, 127 when it could not start
  std::string out;
  std::string err;
  double seconds = 0;  // wall time
};

// Runs argv[0] (looked up in PATH when it has no slash) with `extra_env`
// added to this process's environment.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& extra_env = {});

// The last `lines` lines of `text`.
std::string tail_lines(const std::string& text, int lines);

// `argv` as one line a shell would take back (arguments quoted where needed).
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace synapse::bench
