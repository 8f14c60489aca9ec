#include "chat/jinja_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "chat/jinja_text.h"

namespace synapse::chat::jinja {
namespace {

uint32_t decode(std::string_view cp) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(cp[i])); };
  switch (cp.size()) {
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    case 4: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    default: return b(0);
  }
}

void append_u_escape(std::string& out, uint32_t unit) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", unit);
  out += buffer;
}

void append_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (std::string_view cp : code_points(s)) {
    const unsigned char c = static_cast<unsigned char>(cp[0]);
    if (cp.size() == 1) {
      switch (c) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
      }
      if (c < 0x20 || (ensure_ascii && c >= 0x80)) {
        append_u_escape(out, c);
        continue;
      }
    } else if (ensure_ascii) {
      uint32_t code = decode(cp);
      if (code >= 0x10000) {
        code -= 0x10000;
        append_u_escape(out, 0xD800 + (code >> 10));
        append_u_escape(out, 0xDC00 + (code & 0x3FF));
      } else {
        append_u_escape(out, code);
      }
      continue;
    }
    out += cp;
  }
  out += '"';
}

void dump(std::string& out, const Value& v, const JsonOptions& options, int64_t level) {
  const auto newline = [&](int64_t depth) {
    out += '\n';
    out.append(static_cast<size_t>(std::max<int64_t>(0, *options.indent * depth)), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : format_float(d);
      return;
    }
    case Value::Kind::String: append_string(out, v.as_string(), options.ensure_ascii); return;
    case Value::Kind::List: {
      const List& list = v.as_list();
      if (list.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) out += options.indent ? "," : ", ";
        if (options.indent) newline(level + 1);
        dump(out, list[i], options, level + 1);
      }
      if (options.indent) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::Dict: {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : v.as_dict().entries) entries.push_back(&entry);
      if (entries.empty()) {
        out += "{}";
        return;
      }
      if (options.sort_keys) {
        std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += options.indent ? "," : ", ";
        if (options.indent) newline(level + 1);
        append_string(out, entries[i]->first, options.ensure_ascii);
        out += ": ";
        dump(out, entries[i]->second, options, level + 1);
      }
      if (options.indent) newline(level);
      out += '}';
      return;
    }
    case Value::Kind::Undefined:
    case Value::Kind::Function: break;
  }
  throw std::invalid_argument(std::string("a ") + v.type_name() + " value is not JSON serializable");
}

}  // namespace

std::string to_json(const Value& value, const JsonOptions& options) {
  std::string out;
  dump(out, value, options, 0);
  return out;
}

}  // namespace synapse::chat::jinja
