#include "chat/jinja_eval.h"

#include <algorithm>

#include "chat/jinja_builtins.h"
#include "chat/jinja_errors.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"
#include "synapse/error.h"

namespace synapse::chat::jinja {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_) {
    auto it = s->vars_.find(name);
    if (it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

Evaluator::Evaluator(const RenderLimits& limits, std::string fixed_date)
    : limits_(limits), fixed_date_(std::move(fixed_date)) {
  install_globals(globals_, *this);
}

std::string Evaluator::render(const Template& t, const std::vector<std::pair<std::string, Value>>& variables) {
  Scope root(&globals_);
  for (const auto& [name, value] : variables) root.set(name, value);
  root_ = &root;
  std::string out;
  exec(t.body, root, out);
  root_ = nullptr;
  return out;
}

void Evaluator::step(int line) {
  if (++steps_ > limits_.max_steps) {
    throw_runtime(line, "template ran more than " + std::to_string(limits_.max_steps) + " loop iterations and calls");
  }
}

void Evaluator::charge(const Value& built, int line) {
  if (built.is_string()) built_bytes_ += built.as_string().size();
  else if (built.is_list()) built_bytes_ += built.as_list().size() * sizeof(Value);
  if (built_bytes_ > limits_.max_built_bytes) {
    throw_runtime(line, "template built more than " + std::to_string(limits_.max_built_bytes) + " bytes of values");
  }
}

void Evaluator::append(std::string& out, const std::string& text, int line) {
  if (out.size() + text.size() > limits_.max_output_bytes) {
    throw_runtime(line, "output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
  out += text;
}

Evaluator::Nested::Nested(Evaluator& evaluator, int line) : evaluator_(evaluator) {
  if (++evaluator_.eval_depth_ > evaluator_.limits_.max_eval_depth) {
    --evaluator_.eval_depth_;
    throw_runtime(line, "expressions, blocks and macro calls nested deeper than " +
                            std::to_string(evaluator_.limits_.max_eval_depth));
  }
}

Evaluator::Flow Evaluator::exec(const Body& body, Scope& scope, std::string& out) {
  const Nested nested(*this, body.empty() ? 0 : body.front()->line);
  return exec_body(body, scope, out);
}

Evaluator::Flow Evaluator::exec_body(const Body& body, Scope& scope, std::string& out) {
  for (const StmtPtr& sp : body) {
    const Stmt& s = *sp;
    switch (s.kind) {
      case Stmt::Kind::Text: append(out, s.text, s.line); break;
      case Stmt::Kind::Output: append(out, eval(*s.expr, scope).str(), s.line); break;
      case Stmt::Kind::If: {
        // `if` opens no scope in Jinja: a set inside it is seen after it.
        const Flow flow = exec(eval(*s.expr, scope).truthy() ? s.body : s.else_body, scope, out);
        if (flow != Flow::Normal) return flow;
        break;
      }
      case Stmt::Kind::For: exec_for(s, scope, out); break;
      case Stmt::Kind::Set: exec_set(s, scope); break;
      case Stmt::Kind::SetBlock: {
        std::string captured;
        exec(s.body, scope, captured);
        scope.set(s.targets[0], Value(std::move(captured)));
        break;
      }
      case Stmt::Kind::Macro: scope.set(s.targets[0], make_macro(s)); break;
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
    }
  }
  return Flow::Normal;
}

namespace {

List iteration_items(const Value& iterable, int line) {
  switch (iterable.kind()) {
    case Value::Kind::List: return iterable.as_list();
    case Value::Kind::Undefined: return {};  // Jinja iterates an undefined value as empty
    case Value::Kind::Dict: {
      List keys;
      for (const auto& [key, value] : iterable.as_dict().entries) keys.emplace_back(key);
      return keys;
    }
    case Value::Kind::String: {
      List chars;
      for (std::string_view cp : code_points(iterable.as_string())) chars.emplace_back(std::string(cp));
      return chars;
    }
    default: throw_runtime(line, std::string("cannot iterate over a ") + iterable.type_name());
  }
}

void bind_targets(Scope& scope, const std::vector<std::string>& targets, const Value& item, int line) {
  if (targets.size() == 1) return scope.set(targets[0], item);
  if (!item.is_list() || item.as_list().size() != targets.size()) {
    throw_runtime(line, "cannot unpack a " + std::string(item.type_name()) + " into " + std::to_string(targets.size()) +
                            " names");
  }
  for (size_t i = 0; i < targets.size(); ++i) scope.set(targets[i], item.as_list()[i]);
}

}  // namespace

Evaluator::Flow Evaluator::exec_for(const Stmt& s, Scope& scope, std::string& out) {
  List items = iteration_items(eval(*s.expr, scope), s.line);
  if (s.filter) {
    List kept;
    for (const Value& item : items) {
      step(s.line);
      Scope probe(&scope);
      bind_targets(probe, s.targets, item, s.line);
      if (eval(*s.filter, probe).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec(s.else_body, scope, out);
  const int64_t length = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < length; ++i) {
    step(s.line);
    Scope iteration(&scope);  // each pass gets its own scope, as in Jinja
    bind_targets(iteration, s.targets, items[i], s.line);
    Dict loop;
    loop.entries = {{"index", i + 1},
                    {"index0", i},
                    {"first", i == 0},
                    {"last", i == length - 1},
                    {"length", length},
                    {"revindex", length - i},
                    {"revindex0", length - i - 1},
                    {"previtem", i > 0 ? items[i - 1] : Value()},
                    {"nextitem", i + 1 < length ? items[i + 1] : Value()}};
    loop.entries.emplace_back("cycle", Value(Function([i](CallArgs& args) {
                                if (args.positional.empty()) throw_runtime(args.line, "loop.cycle() needs arguments");
                                return args.positional[static_cast<size_t>(i) % args.positional.size()];
                              })));
    iteration.set("loop", Value(std::move(loop)));
    if (exec(s.body, iteration, out) == Flow::Break) break;
  }
  return Flow::Normal;
}

void Evaluator::exec_set(const Stmt& s, Scope& scope) {
  Value value = eval(*s.expr, scope);
  if (s.attribute.empty()) return bind_targets(scope, s.targets, value, s.line);
  const Value* target = scope.find(s.targets[0]);
  if (!target || !target->is_dict() || !target->as_dict().is_namespace) {
    throw_runtime(s.line, "cannot set attribute '" + s.attribute + "' of '" + s.targets[0] + "', which is not a namespace()");
  }
  try {
    target->mutable_dict().set(s.attribute, std::move(value));
  } catch (const Error& e) {
    throw_runtime(s.line, e.message());
  }
}

Value Evaluator::make_macro(const Stmt& macro) {
  return Value(Function([this, &macro](CallArgs& args) {
    step(args.line);
    if (call_depth_ >= limits_.max_call_depth) {
      throw_runtime(args.line, "macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
    }
    if (args.positional.size() > macro.params.size()) {
      throw_runtime(args.line, "macro '" + macro.targets[0] + "' takes " + std::to_string(macro.params.size()) +
                                   " arguments, got " + std::to_string(args.positional.size()));
    }
    // Macros see template-level names and their own parameters.
    Scope local(root_);
    for (size_t i = 0; i < macro.params.size(); ++i) {
      Value v = args.get(i, macro.params[i]);
      if (v.is_undefined() && macro.defaults[i]) v = eval(*macro.defaults[i], local);
      local.set(macro.params[i], std::move(v));
    }
    for (const auto& [name, value] : args.keyword) {
      if (std::find(macro.params.begin(), macro.params.end(), name) == macro.params.end()) {
        throw_runtime(args.line, "macro '" + macro.targets[0] + "' has no parameter '" + name + "'");
      }
    }
    ++call_depth_;
    std::string out;
    try {
      exec(macro.body, local, out);
    } catch (...) {
      --call_depth_;
      throw;
    }
    --call_depth_;
    return Value(std::move(out));
  }));
}

}  // namespace synapse::chat::jinja
