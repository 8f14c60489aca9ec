// Global functions chat templates call: range(), namespace(), dict(),
// raise_exception() (transformers' way for a template to reject input) and
// strftime_now() (transformers' clock, fixable for reproducible renders).
#include <chrono>
#include <cstdio>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "synapse/error.h"

namespace synapse::chat::jinja {

std::optional<size_t> resolve_index(int64_t index, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  const int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n) return std::nullopt;
  return static_cast<size_t>(i);
}

namespace {

Value range(Evaluator& ev, const CallArgs& args) {
  check_arity(args, 3, "range()");
  if (args.positional.empty()) throw_runtime(args.line, "range() needs at least one argument");
  for (const Value& v : args.positional) {
    if (!v.is_int()) throw_runtime(args.line, std::string("range() needs integers, got ") + v.type_name());
  }
  const bool one = args.positional.size() == 1;
  const int64_t start = one ? 0 : args.positional[0].as_int();
  const int64_t stop = one ? args.positional[0].as_int() : args.positional[1].as_int();
  const int64_t step = args.positional.size() == 3 ? args.positional[2].as_int() : 1;
  if (step == 0) throw_runtime(args.line, "range() step must not be zero");
  const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 count = span <= 0 ? 0 : (span + (step > 0 ? step : -static_cast<__int128>(step)) - 1) /
                                             (step > 0 ? step : -static_cast<__int128>(step));
  if (count > static_cast<__int128>(ev.limits().max_steps)) {
    throw_runtime(args.line, "range() longer than " + std::to_string(ev.limits().max_steps) + " items");
  }
  List out;
  for (__int128 i = 0; i < count; ++i) out.push_back(static_cast<int64_t>(start + i * step));
  return out;
}

Value make_namespace(const CallArgs& args, bool is_namespace, const char* who) {
  Dict dict;
  dict.is_namespace = is_namespace;
  for (const Value& initial : args.positional) {
    if (!initial.is_dict()) throw_runtime(args.line, std::string(who) + "() takes keyword arguments or a dict");
    for (const auto& [key, value] : initial.as_dict().entries) dict.set(key, value);
  }
  for (const auto& [key, value] : args.keyword) dict.set(key, value);
  try {
    return Value(std::move(dict));
  } catch (const Error& e) {
    throw_runtime(args.line, e.message());
  }
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
struct CivilDate {
  int64_t year;
  unsigned month, day;
};
CivilDate civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

Value strftime_now(const std::string& fixed_date, const CallArgs& args) {
  const auto format = string_arg(args, 0, "format", "strftime_now()");
  if (!format) throw_runtime(args.line, "strftime_now() needs a format string");
  int64_t seconds = 0;
  if (fixed_date.empty()) {
    seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  } else {
    int y = 0;
    unsigned m = 0, d = 0;
    if (std::sscanf(fixed_date.c_str(), "%d-%u-%u", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 || d > 31) {
      throw_runtime(args.line, "fixed date '" + fixed_date + "' is not YYYY-MM-DD");
    }
    seconds = days_from_civil(y, m, d) * 86400;
  }
  const int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  const int64_t in_day = seconds - days * 86400;
  const CivilDate date = civil_from_days(days);
  static constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                            "July",    "August",   "September", "October", "November", "December"};
  static constexpr const char* kDays[] = {"Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"};
  const char* weekday = kDays[((days % 7) + 7) % 7];  // 1970-01-01 was a Thursday
  const char* month = kMonths[date.month - 1];
  const auto two = [](int64_t v) {
    std::string text = std::to_string(v);
    return text.size() < 2 ? "0" + text : text;
  };
  std::string out;
  for (size_t i = 0; i < format->size(); ++i) {
    if ((*format)[i] != '%' || i + 1 == format->size()) {
      out += (*format)[i];
      continue;
    }
    switch ((*format)[++i]) {
      case 'Y': out += std::to_string(date.year); break;
      case 'y': out += two(((date.year % 100) + 100) % 100); break;
      case 'm': out += two(date.month); break;
      case 'd': out += two(date.day); break;
      case 'b': out += std::string(month, 3); break;
      case 'B': out += month; break;
      case 'a': out += std::string(weekday, 3); break;
      case 'A': out += weekday; break;
      case 'H': out += two(in_day / 3600); break;
      case 'M': out += two(in_day / 60 % 60); break;
      case 'S': out += two(in_day % 60); break;
      case '%': out += '%'; break;
      default: throw_unsupported(args.line, std::string("strftime_now() directive %") + (*format)[i]);
    }
  }
  return out;
}

}  // namespace

void install_globals(Scope& globals, Evaluator& ev) {
  globals.set("range", Value(Function([&ev](CallArgs& args) { return range(ev, args); })));
  globals.set("namespace", Value(Function([](CallArgs& args) { return make_namespace(args, true, "namespace"); })));
  globals.set("dict", Value(Function([](CallArgs& args) { return make_namespace(args, false, "dict"); })));
  globals.set("raise_exception", Value(Function([](CallArgs& args) -> Value {
                const Value message = args.get(0, "message");
                throw Error(ErrorKind::InvalidValue, "chat template raised an exception: " + message.str());
              })));
  globals.set("strftime_now",
              Value(Function([&ev](CallArgs& args) { return strftime_now(ev.fixed_date(), args); })));
}

}  // namespace synapse::chat::jinja
