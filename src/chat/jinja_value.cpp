#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "synapse/error.h"

namespace synapse::chat::jinja {

namespace {

void check_depth(uint32_t depth) {
  if (depth > kMaxValueDepth) {
    throw Error(ErrorKind::InvalidValue, "lists and dicts nested deeper than " + std::to_string(kMaxValueDepth));
  }
}

}  // namespace

const Value* Dict::find(std::string_view key) const {
  for (const auto& [name, value] : entries) {
    if (name == key) return &value;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  if (is_namespace) {
    if (value.holds_namespace()) throw Error(ErrorKind::InvalidValue, "a namespace cannot hold a namespace");
    check_depth(value.depth() + 1);
    depth = std::max(depth, value.depth() + 1);
  }
  for (auto& [name, existing] : entries) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  entries.emplace_back(key, std::move(value));
}

Value::Value(List list) {
  uint32_t deepest = 0;
  bool holds = false;
  for (const Value& item : list) {
    deepest = std::max(deepest, item.depth());
    holds = holds || item.holds_namespace();
  }
  check_depth(deepest + 1);
  data_ = std::make_shared<ListBox>(ListBox{std::move(list), deepest + 1, holds});
}

Value::Value(Dict dict) {
  uint32_t deepest = 0;
  bool holds = dict.is_namespace;
  for (const auto& [key, item] : dict.entries) {
    deepest = std::max(deepest, item.depth());
    holds = holds || item.holds_namespace();
  }
  check_depth(deepest + 1);
  dict.depth = deepest + 1;
  dict.holds_namespace = holds;
  data_ = std::make_shared<Dict>(std::move(dict));
}

uint32_t Value::depth() const {
  if (is_list()) return std::get<std::shared_ptr<ListBox>>(data_)->depth;
  if (is_dict()) return as_dict().depth;
  return 0;
}

bool Value::holds_namespace() const {
  if (is_list()) return std::get<std::shared_ptr<ListBox>>(data_)->holds_namespace;
  if (is_dict()) return as_dict().holds_namespace;
  return false;
}

Value Value::none() {
  Value v;
  v.data_ = NoneTag{};
  return v;
}

int64_t Value::as_int() const {
  if (kind() == Kind::Bool) return as_bool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (kind() == Kind::Float) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_double() != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::List: return !as_list().empty();
    case Kind::Dict: return !as_dict().entries.empty();
    case Kind::Function: return true;
  }
  return false;
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buffer[64];
  const double magnitude = std::fabs(d);
  // Python switches to exponent notation outside [1e-4, 1e16).
  const bool scientific = magnitude != 0.0 && (magnitude < 1e-4 || magnitude >= 1e16);
  auto result = std::to_chars(buffer, buffer + sizeof buffer, d,
                              scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string text(buffer, result.ptr);
  if (!scientific && text.find('.') == std::string::npos) text += ".0";
  return text;
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return as_bool() ? "True" : "False";
    case Kind::Int: return std::to_string(as_int());
    case Kind::Float: return format_float(as_double());
    case Kind::String: return as_string();
    case Kind::Function: return "<function>";
    case Kind::List:
    case Kind::Dict: return repr();
  }
  return "";
}

namespace {

std::string repr_string(const std::string& s) {
  // Python prefers single quotes unless the text holds ' and no ".
  const char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == quote) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string Value::repr() const {
  switch (kind()) {
    case Kind::String: return repr_string(as_string());
    case Kind::Undefined: return "Undefined";
    case Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < as_list().size(); ++i) {
        if (i) out += ", ";
        out += as_list()[i].repr();
      }
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : as_dict().entries) {
        if (!first) out += ", ";
        first = false;
        out += repr_string(key) + ": " + value.repr();
      }
      return out + "}";
    }
    default: return str();
  }
}

const char* Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "none";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Function: return "function";
  }
  return "?";
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.as_string() == b.as_string();
    case Value::Kind::List: {
      const List& x = a.as_list();
      const List& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::Dict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [key, value] : x.entries) {
        const Value* other = y.find(key);
        if (!other || !equals(value, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Function: return &a.as_function() == &b.as_function();
    default: return false;
  }
}

Value CallArgs::get(size_t index, std::string_view name) const {
  if (index < positional.size()) return positional[index];
  for (const auto& [key, value] : keyword) {
    if (key == name) return value;
  }
  return Value();
}

}  // namespace synapse::chat::jinja
