// Tests (`x is defined`) and the methods of strings and dicts that chat
// templates call (`content.strip()`, `message.get('x')`). Lists are
// immutable, as in transformers' sandbox: append() and friends are refused.
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"

namespace synapse::chat::jinja {
namespace {

bool is_lower_text(const std::string& s) { return to_lower(s) == s && to_upper(s) != s; }
bool is_upper_text(const std::string& s) { return to_upper(s) == s && to_lower(s) != s; }

Value string_method(const std::string& self, const std::string& name, const CallArgs& args) {
  const std::string who = "str." + name + "()";
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    check_arity(args, 1, who);
    return strip(self, name != "rstrip", name != "lstrip", string_arg(args, 0, "chars", who));
  }
  if (name == "startswith" || name == "endswith") {
    check_arity(args, 1, who);
    const Value affix = args.get(0, "prefix");
    List candidates = affix.is_list() ? affix.as_list() : List{affix};
    for (const Value& c : candidates) {
      if (!c.is_string()) throw_runtime(args.line, who + " needs a string or a tuple of strings");
      const std::string& a = c.as_string();
      const bool match = a.size() <= self.size() &&
                         (name == "startswith" ? self.compare(0, a.size(), a) == 0
                                               : self.compare(self.size() - a.size(), a.size(), a) == 0);
      if (match) return true;
    }
    return false;
  }
  if (name == "split") {
    check_arity(args, 2, who);
    try {
      List parts;
      for (std::string& p : split(self, string_arg(args, 0, "sep", who), int_arg(args, 1, "maxsplit", who).value_or(-1))) {
        parts.emplace_back(std::move(p));
      }
      return parts;
    } catch (const std::invalid_argument&) {
      throw_runtime(args.line, "str.split(): empty separator");
    }
  }
  if (name == "replace") {
    check_arity(args, 3, who);
    const auto from = string_arg(args, 0, "old", who);
    const auto to = string_arg(args, 1, "new", who);
    if (!from || !to) throw_runtime(args.line, who + " needs the old and new strings");
    try {
      return replace(self, *from, *to, int_arg(args, 2, "count", who).value_or(-1), RenderLimits{}.max_output_bytes);
    } catch (const std::length_error&) {
      throw_runtime(args.line, who + ": result too large");
    }
  }
  if (name == "find") {
    const auto needle = string_arg(args, 0, "sub", who);
    if (!needle) throw_runtime(args.line, who + " needs a string");
    const size_t at = self.find(*needle);
    return at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(code_points(self.substr(0, at)).size());
  }
  if (name == "join") {
    std::string out;
    const Value items = args.get(0, "iterable");
    if (!items.is_list()) throw_runtime(args.line, who + " needs a list");
    for (size_t i = 0; i < items.as_list().size(); ++i) {
      if (i) out += self;
      out += items.as_list()[i].str();
    }
    return out;
  }
  if (name == "upper") return to_upper(self);
  if (name == "lower") return to_lower(self);
  if (name == "title") return title_case(self);
  if (name == "capitalize") return capitalize(self);
  if (name == "islower") return is_lower_text(self);
  if (name == "isupper") return is_upper_text(self);
  throw_unsupported(args.line, "string method '" + name + "'");
}

Value dict_method(const Value& self, const std::string& name, const CallArgs& args) {
  const Dict& dict = self.as_dict();
  if (name == "get") {
    check_arity(args, 2, "dict.get()");
    const Value key = args.get(0, "key");
    const Value* found = key.is_string() ? dict.find(key.as_string()) : nullptr;
    if (found) return *found;
    const Value fallback = args.get(1, "default");
    return fallback.is_undefined() ? Value::none() : fallback;
  }
  List out;
  for (const auto& [key, value] : dict.entries) {
    if (name == "items") out.emplace_back(List{Value(key), value});
    else if (name == "keys") out.emplace_back(key);
    else out.push_back(value);
  }
  return out;
}

const std::unordered_set<std::string>& string_methods() {
  static const std::unordered_set<std::string> names = {
      "strip", "lstrip", "rstrip", "startswith", "endswith", "split", "replace", "find",
      "join",  "upper",  "lower",  "title",      "capitalize", "islower", "isupper"};
  return names;
}

}  // namespace

std::optional<Value> bound_method(const Value& object, const std::string& name) {
  if (object.is_string() && string_methods().count(name)) {
    return Value(Function([object, name](CallArgs& args) { return string_method(object.as_string(), name, args); }));
  }
  if (object.is_dict() && !object.as_dict().is_namespace &&
      (name == "get" || name == "items" || name == "keys" || name == "values")) {
    return Value(Function([object, name](CallArgs& args) { return dict_method(object, name, args); }));
  }
  return std::nullopt;
}

namespace {

const std::unordered_set<std::string>& test_names() {
  static const std::unordered_set<std::string> names = {
      "defined", "undefined", "none", "boolean", "true", "false", "integer", "float", "number", "string",
      "mapping", "iterable", "sequence", "callable", "odd", "even", "divisibleby", "eq", "equalto", "==",
      "ne", "!=", "lt", "<", "gt", ">", "le", "<=", "ge", ">=", "in", "sameas", "lower", "upper"};
  return names;
}

}  // namespace

bool is_known_test(const std::string& name) { return test_names().count(name) != 0; }

bool apply_test(const std::string& name, const Value& v, const CallArgs& args) {
  using K = Value::Kind;
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.kind() == K::Bool;
  if (name == "true") return v.kind() == K::Bool && v.as_bool();
  if (name == "false") return v.kind() == K::Bool && !v.as_bool();
  if (name == "integer") return v.kind() == K::Int;
  if (name == "float") return v.kind() == K::Float;
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable" || name == "sequence") return v.is_string() || v.is_list() || v.is_dict();
  if (name == "callable") return v.is_function();
  if (name == "lower") return v.is_string() && is_lower_text(v.as_string());
  if (name == "upper") return v.is_string() && is_upper_text(v.as_string());
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!v.is_int()) throw_runtime(args.line, "test '" + name + "' needs an integer");
    if (name == "divisibleby") {
      const int64_t n = int_arg(args, 0, "num", "divisibleby").value_or(0);
      if (n == 0) throw_runtime(args.line, "divisibleby 0");
      return n == -1 || v.as_int() % n == 0;
    }
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  const Value other = args.get(0, "other");
  if (name == "sameas") return equals(v, other) && v.kind() == other.kind();
  if (name == "in") return contains(other, v, args.line);
  static const std::unordered_map<std::string, std::string> kComparisons = {
      {"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="}, {"lt", "<"}, {"<", "<"},
      {"gt", ">"},  {">", ">"},         {"le", "<="}, {"<=", "<="}, {"ge", ">="}, {">=", ">="}};
  auto it = kComparisons.find(name);
  if (it == kComparisons.end()) throw_unsupported(args.line, "test '" + name + "'");
  return binary_op(it->second, v, other, args.line, RenderLimits{}).truthy();
}

}  // namespace synapse::chat::jinja
