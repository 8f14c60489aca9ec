// Renders a parsed template. Every resource a hostile template could spend
// is bounded (RenderLimits), and every failure is a synapse::Error.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/jinja_ast.h"

namespace synapse::chat::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;
  // Loop iterations and macro calls, all together.
  uint64_t max_steps = 200'000;
  int max_call_depth = 16;
  // Expressions and blocks being evaluated inside one another, macro calls
  // included: each takes a stack frame. The parser bounds one tree's height
  // (kMaxExpressionHeight) and block nesting; this bounds what macros
  // calling macros (and their defaults) stack up. A level takes a few
  // frames; in an AddressSanitizer build 1500 levels overflowed 8 MiB.
  int max_eval_depth = 400;
  // Bytes of strings and list slots built by operators, filters and methods.
  uint64_t max_built_bytes = uint64_t{512} << 20;
};

class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}
  // The innermost binding of name, or null.
  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value value) { vars_[name] = std::move(value); }

 private:
  std::unordered_map<std::string, Value> vars_;
  const Scope* parent_;
};

class Evaluator {
 public:
  Evaluator(const RenderLimits& limits, std::string fixed_date);

  // Renders with `variables` (messages, bos_token, ...) visible to the template.
  std::string render(const Template& t, const std::vector<std::pair<std::string, Value>>& variables);

  Value eval(const Expr& e, const Scope& scope);
  // Counts a value just built against max_built_bytes.
  void charge(const Value& built, int line);
  // Counts one loop iteration or call against max_steps.
  void step(int line);
  const RenderLimits& limits() const { return limits_; }
  const std::string& fixed_date() const { return fixed_date_; }

 private:
  enum class Flow { Normal, Break, Continue };
  Flow exec(const Body& body, Scope& scope, std::string& out);
  Flow exec_body(const Body& body, Scope& scope, std::string& out);
  Value eval_node(const Expr& e, const Scope& scope);
  // Counts one level of evaluation against max_eval_depth while it lives.
  class Nested {
   public:
    Nested(Evaluator& evaluator, int line);
    ~Nested() { --evaluator_.eval_depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Evaluator& evaluator_;
  };
  Flow exec_for(const Stmt& s, Scope& scope, std::string& out);
  void exec_set(const Stmt& s, Scope& scope);
  void append(std::string& out, const std::string& text, int line);
  Value eval_binary(const Expr& e, const Scope& scope);
  Value eval_call(const Expr& e, const Scope& scope);
  CallArgs eval_args(const Expr& e, size_t first, const Scope& scope);
  Value make_macro(const Stmt& macro);

  RenderLimits limits_;
  std::string fixed_date_;
  Scope globals_{nullptr};
  Scope* root_ = nullptr;  // template-level variables; macros run in a child of it
  uint64_t steps_ = 0;
  uint64_t built_bytes_ = 0;
  int call_depth_ = 0;
  int eval_depth_ = 0;
};

}  // namespace synapse::chat::jinja
