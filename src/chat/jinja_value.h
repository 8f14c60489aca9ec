// Values of the Jinja interpreter, with Python's semantics where chat
// templates can observe them (truthiness, str(), repr(), equality).
// Lists and dicts are shared by reference, as in Python, so a namespace()
// mutated inside a loop is seen outside it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace synapse::chat::jinja {

class Value;
struct CallArgs;
using List = std::vector<Value>;
// Insertion-ordered, as Python dicts are (tojson and items() show the order).
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  bool is_namespace = false;  // made by namespace(): the one dict `set x.y` may change
  // Filled in when the dict becomes a Value (see kMaxValueDepth).
  uint32_t depth = 1;
  bool holds_namespace = false;

  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value value);
};
using Function = std::function<Value(CallArgs&)>;

// Lists and dicts nest at most this deep, so printing, comparing or freeing a
// value built by a hostile loop cannot exhaust the stack. A namespace may not
// hold a value that holds a namespace, which rules out reference cycles.
inline constexpr uint32_t kMaxValueDepth = 256;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

  Value() = default;  // undefined
  static Value none();
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(List list);  // throws synapse::Error past kMaxValueDepth
  Value(Dict dict);  // throws synapse::Error past kMaxValueDepth
  Value(Function fn) : data_(std::make_shared<Function>(std::move(fn))) {}

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_int() const { return kind() == Kind::Int || kind() == Kind::Bool; }
  bool is_number() const { return is_int() || kind() == Kind::Float; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_function() const { return kind() == Kind::Function; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;  // Int or Bool
  double as_double() const;  // any number
  const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(data_); }
  const List& as_list() const { return std::get<std::shared_ptr<ListBox>>(data_)->items; }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  Dict& mutable_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Function& as_function() const { return *std::get<std::shared_ptr<Function>>(data_); }

  bool truthy() const;
  // Python's str(): what {{ value }} prints (undefined prints nothing).
  std::string str() const;
  // Python's repr(): how a value shows inside a printed list or dict.
  std::string repr() const;
  const char* type_name() const;
  // 0 for scalars, 1 + the deepest element for lists and dicts.
  uint32_t depth() const;
  bool holds_namespace() const;

 private:
  struct NoneTag {};
  struct ListBox {
    List items;
    uint32_t depth;
    bool holds_namespace;
  };
  // Strings are shared too: templates read the same message text many times.
  std::variant<std::monostate, NoneTag, bool, int64_t, double, std::shared_ptr<const std::string>, std::shared_ptr<ListBox>,
               std::shared_ptr<Dict>, std::shared_ptr<Function>>
      data_;
};

// Python ==, deep for lists and dicts; 1 == 1.0 == True.
bool equals(const Value& a, const Value& b);

// Arguments of a call, filter or test: positional first, then keywords.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  int line = 0;

  // The argument at `index` or named `name`, or undefined when absent.
  Value get(size_t index, std::string_view name) const;
};

// Python float repr: shortest round-trip digits, "1.0" for integral values.
std::string format_float(double d);

}  // namespace synapse::chat::jinja
