#include "chat/jinja_errors.h"

#include "synapse/error.h"

namespace synapse::chat::jinja {

void throw_syntax(int line, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, "chat template line " + std::to_string(line) + ": syntax error: " + what);
}

void throw_unsupported(int line, const std::string& construct) {
  throw Error(ErrorKind::Unsupported,
              "chat template line " + std::to_string(line) + ": unsupported Jinja construct: " + construct);
}

void throw_runtime(int line, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, "chat template line " + std::to_string(line) + ": " + what);
}

}  // namespace synapse::chat::jinja
