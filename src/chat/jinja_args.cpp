#include "chat/jinja_args.h"

#include <charconv>

#include "chat/jinja_text.h"

namespace synapse::chat::jinja {

std::optional<std::string> string_arg(const CallArgs& args, size_t index, const char* name, const std::string& who) {
  const Value v = args.get(index, name);
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  if (!v.is_string()) throw_runtime(args.line, who + ": argument '" + name + "' must be a string, not " + v.type_name());
  return v.as_string();
}

std::optional<int64_t> int_arg(const CallArgs& args, size_t index, const char* name, const std::string& who) {
  const Value v = args.get(index, name);
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  if (!v.is_int()) throw_runtime(args.line, who + ": argument '" + name + "' must be an integer, not " + v.type_name());
  return v.as_int();
}

bool bool_arg(const CallArgs& args, size_t index, const char* name, bool fallback) {
  const Value v = args.get(index, name);
  return v.is_undefined() ? fallback : v.truthy();
}

void check_arity(const CallArgs& args, size_t max_positional, const std::string& who) {
  if (args.positional.size() > max_positional) {
    throw_runtime(args.line, who + " takes at most " + std::to_string(max_positional) + " positional arguments, got " +
                                 std::to_string(args.positional.size()));
  }
}

Value attribute_path(const Value& value, const std::string& path) {
  Value current = value;
  for (const std::string& part : split(path, std::string("."), -1)) {
    if (current.is_dict()) {
      const Value* v = current.as_dict().find(part);
      current = v ? *v : Value();
      continue;
    }
    int64_t index = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
    if (current.is_list() && ec == std::errc() && end == part.data() + part.size() && index >= 0 &&
        static_cast<size_t>(index) < current.as_list().size()) {
      current = current.as_list()[static_cast<size_t>(index)];
      continue;
    }
    return Value();
  }
  return current;
}

}  // namespace synapse::chat::jinja
