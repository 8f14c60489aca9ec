// Builds the syntax tree from tokens. Statements the interpreter does not
// implement (call blocks, filter blocks, include, ...) are rejected here,
// at parse time, with the construct's name and line.
#pragma once

#include <string_view>

#include "chat/jinja_ast.h"

namespace synapse::chat::jinja {

// Deeper nesting than this (of blocks or of expressions) is refused, so a
// hostile template cannot exhaust the stack.
inline constexpr int kMaxNesting = 100;

Template parse_template(std::string_view source);

}  // namespace synapse::chat::jinja
