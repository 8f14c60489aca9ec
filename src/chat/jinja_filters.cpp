// Jinja filters, with the behaviour of Jinja2 3.x and transformers' tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_json.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"

namespace synapse::chat::jinja {
namespace {

using FilterFn = Value (*)(Evaluator&, const Value&, const CallArgs&);

List as_sequence(const Value& v, const std::string& filter, int line) {
  if (v.is_list()) return v.as_list();
  if (v.is_undefined()) return {};
  if (v.is_string()) {
    List chars;
    for (std::string_view cp : code_points(v.as_string())) chars.emplace_back(std::string(cp));
    return chars;
  }
  if (v.is_dict()) {
    List keys;
    for (const auto& [key, value] : v.as_dict().entries) keys.emplace_back(key);
    return keys;
  }
  throw_runtime(line, filter + ": expected a sequence, got " + v.type_name());
}

Value filter_trim(Evaluator&, const Value& v, const CallArgs& args) {
  check_arity(args, 1, "trim");
  return strip(v.str(), true, true, string_arg(args, 0, "chars", "trim"));
}

Value filter_tojson(Evaluator&, const Value& v, const CallArgs& args) {
  check_arity(args, 1, "tojson");
  if (!args.get(kKeywordOnly, "separators").is_undefined()) throw_unsupported(args.line, "tojson(separators=...)");
  JsonOptions options;
  options.ensure_ascii = bool_arg(args, 0, "ensure_ascii", false);  // transformers' signature: ensure_ascii first
  options.indent = int_arg(args, kKeywordOnly, "indent", "tojson");
  options.sort_keys = bool_arg(args, kKeywordOnly, "sort_keys", false);
  if (options.indent && (*options.indent < 0 || *options.indent > 64)) throw_runtime(args.line, "tojson: indent out of 0..64");
  try {
    return to_json(v, options);
  } catch (const std::invalid_argument& e) {
    throw_runtime(args.line, std::string("tojson: ") + e.what());
  }
}

Value filter_length(Evaluator&, const Value& v, const CallArgs& args) {
  if (v.is_string()) return static_cast<int64_t>(code_points(v.as_string()).size());
  if (v.is_list()) return static_cast<int64_t>(v.as_list().size());
  if (v.is_dict()) return static_cast<int64_t>(v.as_dict().entries.size());
  if (v.is_undefined()) return int64_t{0};
  throw_runtime(args.line, std::string("length: a ") + v.type_name() + " has no length");
}

Value filter_upper(Evaluator&, const Value& v, const CallArgs&) { return to_upper(v.str()); }
Value filter_lower(Evaluator&, const Value& v, const CallArgs&) { return to_lower(v.str()); }
Value filter_capitalize(Evaluator&, const Value& v, const CallArgs&) { return capitalize(v.str()); }
Value filter_string(Evaluator&, const Value& v, const CallArgs&) { return v.str(); }
Value filter_safe(Evaluator&, const Value& v, const CallArgs&) { return v; }

// Jinja2's title filter: words begin after whitespace, '-', or an opening bracket.
Value filter_title(Evaluator&, const Value& v, const CallArgs&) {
  std::string out = v.str();
  bool at_word_start = true;
  for (char& c : out) {
    const bool separator = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '-' ||
                           c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) {
      at_word_start = true;
      continue;
    }
    if (c >= 'a' && c <= 'z' && at_word_start) c = static_cast<char>(c - 32);
    else if (c >= 'A' && c <= 'Z' && !at_word_start) c = static_cast<char>(c + 32);
    at_word_start = false;
  }
  return out;
}

Value filter_default(Evaluator&, const Value& v, const CallArgs& args) {
  check_arity(args, 2, "default");
  const bool use_for_falsy = bool_arg(args, 1, "boolean", false);
  if (v.is_undefined() || (use_for_falsy && !v.truthy())) {
    const Value fallback = args.get(0, "default_value");
    return fallback.is_undefined() ? Value(std::string()) : fallback;
  }
  return v;
}

Value filter_first(Evaluator&, const Value& v, const CallArgs& args) {
  const List items = as_sequence(v, "first", args.line);
  return items.empty() ? Value() : items.front();
}

Value filter_last(Evaluator&, const Value& v, const CallArgs& args) {
  const List items = as_sequence(v, "last", args.line);
  return items.empty() ? Value() : items.back();
}

Value filter_join(Evaluator& ev, const Value& v, const CallArgs& args) {
  check_arity(args, 2, "join");
  const std::string separator = string_arg(args, 0, "d", "join").value_or("");
  const auto attribute = string_arg(args, 1, "attribute", "join");
  std::string out;
  bool first = true;
  for (const Value& item : as_sequence(v, "join", args.line)) {
    if (!first) out += separator;
    first = false;
    out += (attribute ? attribute_path(item, *attribute) : item).str();
    if (out.size() > ev.limits().max_output_bytes) throw_runtime(args.line, "join: result too large");
  }
  return out;
}

Value filter_replace(Evaluator& ev, const Value& v, const CallArgs& args) {
  check_arity(args, 3, "replace");
  const auto from = string_arg(args, 0, "old", "replace");
  const auto to = string_arg(args, 1, "new", "replace");
  if (!from || !to) throw_runtime(args.line, "replace needs the old and new strings");
  try {
    return replace(v.str(), *from, *to, int_arg(args, 2, "count", "replace").value_or(-1), ev.limits().max_output_bytes);
  } catch (const std::length_error&) {
    throw_runtime(args.line, "replace: result too large");
  }
}

Value filter_list(Evaluator&, const Value& v, const CallArgs& args) { return as_sequence(v, "list", args.line); }

Value filter_items(Evaluator&, const Value& v, const CallArgs& args) {
  if (v.is_undefined()) return List{};
  if (!v.is_dict()) throw_runtime(args.line, std::string("items: expected a dict, got ") + v.type_name());
  List pairs;
  for (const auto& [key, value] : v.as_dict().entries) pairs.emplace_back(List{Value(key), value});
  return pairs;
}

Value filter_int(Evaluator&, const Value& v, const CallArgs& args) {
  const Value fallback = args.get(0, "default").is_undefined() ? Value(int64_t{0}) : args.get(0, "default");
  if (v.is_int()) return v.as_int();
  if (v.kind() == Value::Kind::Float) {
    const double d = std::trunc(v.as_double());
    return std::fabs(d) < 9.2e18 ? Value(static_cast<int64_t>(d)) : fallback;
  }
  if (!v.is_string()) return fallback;
  const std::string text = strip(v.as_string(), true, true);
  int64_t parsed = 0;
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), parsed);
  if (ec == std::errc() && end == text.data() + text.size()) return parsed;
  return fallback;
}

Value filter_float(Evaluator&, const Value& v, const CallArgs& args) {
  const Value fallback = args.get(0, "default").is_undefined() ? Value(0.0) : args.get(0, "default");
  if (v.is_number()) return v.as_double();
  if (!v.is_string()) return fallback;
  const std::string text = strip(v.as_string(), true, true);
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  return (!text.empty() && end == text.c_str() + text.size()) ? Value(d) : fallback;
}

Value filter_abs(Evaluator&, const Value& v, const CallArgs& args) {
  if (v.is_int() && v.as_int() != INT64_MIN) return v.as_int() < 0 ? -v.as_int() : v.as_int();
  if (v.is_number()) return std::fabs(v.as_double());
  throw_runtime(args.line, std::string("abs: expected a number, got ") + v.type_name());
}

Value filter_reverse(Evaluator&, const Value& v, const CallArgs& args) {
  List items = as_sequence(v, "reverse", args.line);
  std::reverse(items.begin(), items.end());
  if (!v.is_string()) return items;
  std::string out;
  for (const Value& c : items) out += c.as_string();
  return out;
}

// Sort key of Jinja's sort/unique: strings compare case-insensitively by default.
Value sort_key(const Value& item, const std::optional<std::string>& attribute, bool case_sensitive) {
  Value key = attribute ? attribute_path(item, *attribute) : item;
  return (!case_sensitive && key.is_string()) ? Value(to_lower(key.as_string())) : key;
}

Value filter_sort(Evaluator& ev, const Value& v, const CallArgs& args) {
  check_arity(args, 3, "sort");
  const bool reverse = bool_arg(args, 0, "reverse", false);
  const bool case_sensitive = bool_arg(args, 1, "case_sensitive", false);
  const auto attribute = string_arg(args, 2, "attribute", "sort");
  List items = as_sequence(v, "sort", args.line);
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(a, attribute, case_sensitive);
    const Value kb = sort_key(b, attribute, case_sensitive);
    return binary_op(reverse ? ">" : "<", ka, kb, args.line, ev.limits()).truthy();
  });
  return items;
}

Value filter_unique(Evaluator&, const Value& v, const CallArgs& args) {
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  const auto attribute = string_arg(args, 1, "attribute", "unique");
  List out;
  List seen;
  for (const Value& item : as_sequence(v, "unique", args.line)) {
    Value key = sort_key(item, attribute, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(std::move(key));
      out.push_back(item);
    }
  }
  return out;
}

// select/reject/selectattr/rejectattr share this: keep items whose test
// (or truthiness when no test is named) equals `keep`.
Value filter_by_test(const Value& v, const CallArgs& args, bool by_attribute, bool keep, const char* who) {
  size_t next = 0;
  std::optional<std::string> attribute;
  if (by_attribute) {
    attribute = string_arg(args, next++, "attribute", who);
    if (!attribute) throw_runtime(args.line, std::string(who) + " needs an attribute name");
  }
  const auto test = string_arg(args, next++, "test", who);
  if (test && !is_known_test(*test)) throw_unsupported(args.line, "test '" + *test + "'");
  CallArgs test_args;
  test_args.line = args.line;
  for (size_t i = next; i < args.positional.size(); ++i) test_args.positional.push_back(args.positional[i]);
  List out;
  for (const Value& item : as_sequence(v, who, args.line)) {
    const Value subject = attribute ? attribute_path(item, *attribute) : item;
    const bool passed = test ? apply_test(*test, subject, test_args) : subject.truthy();
    if (passed == keep) out.push_back(item);
  }
  return out;
}
Value filter_select(Evaluator&, const Value& v, const CallArgs& a) { return filter_by_test(v, a, false, true, "select"); }
Value filter_reject(Evaluator&, const Value& v, const CallArgs& a) { return filter_by_test(v, a, false, false, "reject"); }
Value filter_selectattr(Evaluator&, const Value& v, const CallArgs& a) {
  return filter_by_test(v, a, true, true, "selectattr");
}
Value filter_rejectattr(Evaluator&, const Value& v, const CallArgs& a) {
  return filter_by_test(v, a, true, false, "rejectattr");
}

Value filter_map(Evaluator& ev, const Value& v, const CallArgs& args) {
  List out;
  const auto attribute = string_arg(args, kKeywordOnly, "attribute", "map");
  if (attribute) {
    const Value fallback = args.get(kKeywordOnly, "default");
    for (const Value& item : as_sequence(v, "map", args.line)) {
      Value got = attribute_path(item, *attribute);
      out.push_back(got.is_undefined() && !fallback.is_undefined() ? fallback : got);
    }
    return out;
  }
  const auto filter = string_arg(args, 0, "filter", "map");
  if (!filter) throw_runtime(args.line, "map needs a filter name or attribute=");
  if (!is_known_filter(*filter)) throw_unsupported(args.line, "filter '" + *filter + "'");
  CallArgs rest;
  rest.line = args.line;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  for (const Value& item : as_sequence(v, "map", args.line)) out.push_back(apply_filter(ev, *filter, item, rest));
  return out;
}

Value filter_indent(Evaluator& ev, const Value& v, const CallArgs& args) {
  const Value width_arg = args.get(0, "width");
  std::string pad;
  if (width_arg.is_string()) {
    pad = width_arg.as_string();
  } else {
    const int64_t width = int_arg(args, 0, "width", "indent").value_or(4);
    if (width < 0 || width > 1024) throw_runtime(args.line, "indent: width out of 0..1024");
    pad.assign(static_cast<size_t>(width), ' ');
  }
  const bool first = bool_arg(args, 1, "first", false);
  const bool blank = bool_arg(args, 2, "blank", false);
  const std::vector<std::string> lines = split(v.str(), std::string("\n"), -1);
  if (lines.size() * pad.size() > ev.limits().max_output_bytes) throw_runtime(args.line, "indent: result too large");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    if ((i > 0 || first) && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
  }
  return out;
}

const std::unordered_map<std::string, FilterFn>& filters() {
  static const std::unordered_map<std::string, FilterFn> table = {
      {"trim", filter_trim},         {"tojson", filter_tojson},       {"length", filter_length},
      {"count", filter_length},      {"upper", filter_upper},         {"lower", filter_lower},
      {"title", filter_title},       {"capitalize", filter_capitalize}, {"default", filter_default},
      {"d", filter_default},         {"first", filter_first},         {"last", filter_last},
      {"join", filter_join},         {"replace", filter_replace},     {"list", filter_list},
      {"items", filter_items},       {"string", filter_string},       {"int", filter_int},
      {"float", filter_float},       {"abs", filter_abs},             {"reverse", filter_reverse},
      {"sort", filter_sort},         {"unique", filter_unique},       {"select", filter_select},
      {"reject", filter_reject},     {"selectattr", filter_selectattr}, {"rejectattr", filter_rejectattr},
      {"map", filter_map},           {"indent", filter_indent},       {"safe", filter_safe},
  };
  return table;
}

}  // namespace

bool is_known_filter(const std::string& name) { return filters().count(name) != 0; }

Value apply_filter(Evaluator& ev, const std::string& name, const Value& operand, const CallArgs& args) {
  auto it = filters().find(name);
  if (it == filters().end()) throw_unsupported(args.line, "filter '" + name + "'");
  return it->second(ev, operand, args);
}

}  // namespace synapse::chat::jinja
