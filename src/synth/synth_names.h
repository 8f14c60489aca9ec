// Naming the choices: for help texts and "unknown name" errors.
#pragma once

#include <string>
#include <vector>

#include "synapse/error.h"

namespace synapse::synth {

inline std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Throws Usage: "unknown <what> '<name>' (known: ...)".
[[noreturn]] inline void throw_unknown(const std::string& what, const std::string& name,
                                       const std::vector<std::string>& known) {
  throw Error(ErrorKind::Usage,
              "unknown " + what + " '" + name + "' (known: " + join_names(known) + ")");
}

}  // namespace synapse::synth
