// How the interpreter reports problems: every error is a synapse::Error
// whose message starts with the template line it concerns.
#pragma once

#include <string>

namespace synapse::chat::jinja {

// Malformed template text (unterminated tag, unexpected token, ...).
[[noreturn]] void throw_syntax(int line, const std::string& what);
// Well-formed Jinja this interpreter does not implement; names the construct.
[[noreturn]] void throw_unsupported(int line, const std::string& construct);
// A failure while rendering (type error, limit reached, raise_exception).
[[noreturn]] void throw_runtime(int line, const std::string& what);

}  // namespace synapse::chat::jinja
