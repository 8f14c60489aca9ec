// Filters, tests, methods of strings/dicts and global functions.
#pragma once

#include <optional>
#include <string>

#include "chat/jinja_eval.h"

namespace synapse::chat::jinja {

bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);

Value apply_filter(Evaluator& ev, const std::string& name, const Value& operand, const CallArgs& args);
bool apply_test(const std::string& name, const Value& operand, const CallArgs& args);

// `object.name` as a callable when name is a method of object's type
// (str.startswith, dict.get, ...), else nullopt.
std::optional<Value> bound_method(const Value& object, const std::string& name);

// range, namespace, dict, raise_exception, strftime_now.
void install_globals(Scope& globals, Evaluator& ev);

// Python-style index into a sequence of `size`: negative counts from the end.
std::optional<size_t> resolve_index(int64_t index, size_t size);

}  // namespace synapse::chat::jinja
