// Reading typed arguments of filters, tests, methods and global functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chat/jinja_errors.h"
#include "chat/jinja_value.h"

namespace synapse::chat::jinja {

// Index for an argument that may only be passed by keyword.
inline constexpr size_t kKeywordOnly = SIZE_MAX;

// The argument at `index` or keyword `name`, checked to be a string / int /
// bool; nullopt when absent (undefined or none). `who` names the callee in errors.
std::optional<std::string> string_arg(const CallArgs& args, size_t index, const char* name, const std::string& who);
std::optional<int64_t> int_arg(const CallArgs& args, size_t index, const char* name, const std::string& who);
bool bool_arg(const CallArgs& args, size_t index, const char* name, bool fallback);
// Throws when more positional arguments are passed than the callee takes.
void check_arity(const CallArgs& args, size_t max_positional, const std::string& who);

// `value.a.b` / `value[0]` for the attribute= parameter of map, selectattr, ...
Value attribute_path(const Value& value, const std::string& path);

}  // namespace synapse::chat::jinja
