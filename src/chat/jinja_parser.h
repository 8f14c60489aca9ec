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
// Nor a taller expression tree, which the evaluator walks recursively: a
// chain of operators, filters or attribute reads (`1+1+...`, `x|f|f...`)
// parses in a loop but builds a tree as tall as the chain is long, and one
// of 20,000 links overflowed the stack.
inline constexpr int kMaxExpressionHeight = 250;

Template parse_template(std::string_view source);

}  // namespace synapse::chat::jinja
