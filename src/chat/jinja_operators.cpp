#include "chat/jinja_operators.h"

#include <algorithm>
#include <cmath>

#include "chat/jinja_builtins.h"
#include "chat/jinja_errors.h"
#include "chat/jinja_text.h"

namespace synapse::chat::jinja {
namespace {

[[noreturn]] void type_error(const std::string& op, const Value& a, const Value& b, int line) {
  throw_runtime(line, "unsupported operand types for " + op + ": " + a.type_name() + " and " + b.type_name());
}

[[noreturn]] void overflow(int line) { throw_runtime(line, "integer overflow"); }

int64_t add(int64_t x, int64_t y, int line) {
  int64_t r = 0;
  if (__builtin_add_overflow(x, y, &r)) overflow(line);
  return r;
}
int64_t subtract(int64_t x, int64_t y, int line) {
  int64_t r = 0;
  if (__builtin_sub_overflow(x, y, &r)) overflow(line);
  return r;
}
int64_t multiply(int64_t x, int64_t y, int line) {
  int64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r)) overflow(line);
  return r;
}

int64_t power(int64_t base, int64_t exponent, int line) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = multiply(result, base, line);
    exponent >>= 1;
    if (exponent > 0) base = multiply(base, base, line);
  }
  return result;
}

// Python's floor division and modulo: results round toward minus infinity.
Value arithmetic(const std::string& op, const Value& a, const Value& b, int line) {
  if (a.is_int() && b.is_int() && op != "/") {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    if (op == "+") return add(x, y, line);
    if (op == "-") return subtract(x, y, line);
    if (op == "*") return multiply(x, y, line);
    if (op == "**") {
      if (y < 0) return std::pow(static_cast<double>(x), static_cast<double>(y));
      return power(x, y, line);
    }
    if (y == 0) throw_runtime(line, "integer division or modulo by zero");
    if (x == INT64_MIN && y == -1) overflow(line);
    int64_t q = x / y;
    int64_t m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      --q;
      m += y;
    }
    return op == "//" ? q : m;
  }
  const double x = a.as_double();
  const double y = b.as_double();
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if (op == "**") return std::pow(x, y);
  if (y == 0.0) throw_runtime(line, "float division by zero");
  if (op == "/") return x / y;
  const double q = std::floor(x / y);
  return op == "//" ? q : x - q * y;
}

Value repeat(const Value& seq, int64_t times, int line, const RenderLimits& limits) {
  if (times <= 0) return seq.is_string() ? Value(std::string()) : Value(List{});
  const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size() * sizeof(Value);
  if (unit != 0 && static_cast<uint64_t>(times) > limits.max_output_bytes / unit) {
    throw_runtime(line, "repetition result would exceed " + std::to_string(limits.max_output_bytes) + " bytes");
  }
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.as_string();
    return out;
  }
  List out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return out;
}

// -1, 0, 1 for numbers, strings and lists (lexicographic); throws otherwise.
int compare(const Value& a, const Value& b, const std::string& op, int line) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double();
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0;
  }
  if (a.is_list() && b.is_list()) {
    const List& x = a.as_list();
    const List& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return compare(x[i], y[i], op, line);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  type_error(op, a, b, line);
}

}  // namespace

bool contains(const Value& container, const Value& item, int line) {
  if (container.is_string()) {
    if (!item.is_string()) throw_runtime(line, "'in <string>' requires a string on the left, not " + std::string(item.type_name()));
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.as_list()) {
      if (equals(v, item)) return true;
    }
    return false;
  }
  if (container.is_dict()) return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
  throw_runtime(line, std::string("argument of type ") + container.type_name() + " is not iterable");
}

Value binary_op(const std::string& op, const Value& a, const Value& b, int line, const RenderLimits& limits) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "<") return compare(a, b, op, line) < 0;
  if (op == ">") return compare(a, b, op, line) > 0;
  if (op == "<=") return compare(a, b, op, line) <= 0;
  if (op == ">=") return compare(a, b, op, line) >= 0;
  if (op == "in") return contains(b, a, line);
  if (op == "not in") return !contains(b, a, line);
  if (op == "~") return a.str() + b.str();
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b, line);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return a.as_string() + b.as_string();
    if (a.is_list() && b.is_list()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return out;
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && b.is_int()) return repeat(a, b.as_int(), line, limits);
    if (a.is_int() && (b.is_string() || b.is_list())) return repeat(b, a.as_int(), line, limits);
  }
  if (op == "%" && a.is_string()) throw_unsupported(line, "printf-style string formatting with %");
  type_error(op, a, b, line);
}

Value subscript(const Value& object, const Value& index, int line) {
  if (object.is_dict()) {
    const Value* v = index.is_string() ? object.as_dict().find(index.as_string()) : nullptr;
    return v ? *v : Value();
  }
  if (object.is_undefined()) throw_runtime(line, "cannot index an undefined value");
  if (!index.is_int()) {
    if (index.is_string()) {
      if (auto method = bound_method(object, index.as_string())) return *method;
    }
    return Value();
  }
  if (object.is_list()) {
    const auto at = resolve_index(index.as_int(), object.as_list().size());
    return at ? object.as_list()[*at] : Value();
  }
  if (object.is_string()) {
    const auto cps = code_points(object.as_string());
    const auto at = resolve_index(index.as_int(), cps.size());
    return at ? Value(std::string(cps[*at])) : Value();
  }
  return Value();
}

Value slice(const Value& object, const Value& start_v, const Value& stop_v, const Value& step_v, int line) {
  const auto bound = [&](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int()) throw_runtime(line, std::string("slice ") + what + " must be an integer");
    return v.as_int();
  };
  const int64_t step = bound(step_v, "step").value_or(1);
  if (step == 0) throw_runtime(line, "slice step cannot be zero");
  std::vector<std::string_view> cps;
  if (object.is_string()) cps = code_points(object.as_string());
  else if (!object.is_list()) throw_runtime(line, std::string("cannot slice a ") + object.type_name());
  const int64_t size = static_cast<int64_t>(object.is_string() ? cps.size() : object.as_list().size());
  // Python's slice.indices(): clamp into range, defaults depend on the step's sign.
  const auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v < 0 ? *v + size : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, size);
    return std::clamp<int64_t>(i, -1, size - 1);
  };
  const int64_t start = clamp(bound(start_v, "start"), step > 0 ? 0 : size - 1);
  const int64_t stop = clamp(bound(stop_v, "stop"), step > 0 ? size : -1);
  std::string text;
  List items;
  // 128-bit index: a step near INT64_MAX must not overflow.
  for (__int128 i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.is_string()) text += cps[static_cast<size_t>(i)];
    else items.push_back(object.as_list()[static_cast<size_t>(i)]);
  }
  if (object.is_string()) return text;
  return items;
}

}  // namespace synapse::chat::jinja
