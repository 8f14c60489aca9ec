// Python semantics of Jinja's operators, subscripts and slices.
#pragma once

#include <string>

#include "chat/jinja_eval.h"

namespace synapse::chat::jinja {

// + - * / // % ** ~ == != < > <= >= in "not in"; `and`/`or` short-circuit
// in the evaluator and never reach here.
Value binary_op(const std::string& op, const Value& lhs, const Value& rhs, int line, const RenderLimits& limits);
// x[i] on lists and strings (code points), x[key] on dicts; undefined when absent.
Value subscript(const Value& object, const Value& index, int line);
// x[start:stop:step]; each bound may be undefined (absent).
Value slice(const Value& object, const Value& start, const Value& stop, const Value& step, int line);
// Python `item in container`.
bool contains(const Value& container, const Value& item, int line);

}  // namespace synapse::chat::jinja
