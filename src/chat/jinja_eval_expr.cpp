// Expression evaluation: the Expr half of Evaluator.
#include "chat/jinja_builtins.h"
#include "chat/jinja_errors.h"
#include "chat/jinja_eval.h"
#include "chat/jinja_operators.h"

namespace synapse::chat::jinja {

CallArgs Evaluator::eval_args(const Expr& e, size_t first, const Scope& scope) {
  CallArgs args;
  args.line = e.line;
  for (size_t i = first; i < e.children.size(); ++i) {
    const std::string& keyword = e.arg_names[i - first];
    Value v = eval(*e.children[i], scope);
    if (keyword.empty()) {
      if (!args.keyword.empty()) throw_syntax(e.line, "positional argument follows keyword argument");
      args.positional.push_back(std::move(v));
    } else {
      args.keyword.emplace_back(keyword, std::move(v));
    }
  }
  return args;
}

Value Evaluator::eval_binary(const Expr& e, const Scope& scope) {
  Value lhs = eval(*e.children[0], scope);
  // and/or return an operand, as in Python, and skip the right side when they can.
  if (e.name == "and") return lhs.truthy() ? eval(*e.children[1], scope) : lhs;
  if (e.name == "or") return lhs.truthy() ? lhs : eval(*e.children[1], scope);
  Value result = binary_op(e.name, lhs, eval(*e.children[1], scope), e.line, limits_);
  charge(result, e.line);
  return result;
}

Value Evaluator::eval_call(const Expr& e, const Scope& scope) {
  Value callee = eval(*e.children[0], scope);
  if (!callee.is_function()) {
    std::string what = e.children[0]->kind == Expr::Kind::Name        ? "'" + e.children[0]->name + "'"
                       : e.children[0]->kind == Expr::Kind::Attribute ? "method '" + e.children[0]->name + "'"
                                                                      : "the value";
    if (callee.is_undefined()) throw_unsupported(e.line, "call of undefined function or method " + what);
    throw_runtime(e.line, what + " is a " + callee.type_name() + ", not callable");
  }
  CallArgs args = eval_args(e, 1, scope);
  Value result = callee.as_function()(args);
  charge(result, e.line);
  return result;
}

Value Evaluator::eval(const Expr& e, const Scope& scope) {
  const Nested nested(*this, e.line);
  return eval_node(e, scope);
}

Value Evaluator::eval_node(const Expr& e, const Scope& scope) {
  switch (e.kind) {
    case Expr::Kind::Literal: return e.value;
    case Expr::Kind::Name: {
      const Value* v = scope.find(e.name);
      return v ? *v : Value();
    }
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      List items;
      for (const ExprPtr& child : e.children) items.push_back(eval(*child, scope));
      return Value(std::move(items));
    }
    case Expr::Kind::Dict: {
      Dict dict;
      for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
        Value key = eval(*e.children[i], scope);
        if (!key.is_string()) throw_unsupported(e.line, std::string("dict key of type ") + key.type_name());
        dict.set(key.as_string(), eval(*e.children[i + 1], scope));
      }
      return Value(std::move(dict));
    }
    case Expr::Kind::Unary: {
      Value v = eval(*e.children[0], scope);
      if (e.name == "not") return !v.truthy();
      if (!v.is_number()) throw_runtime(e.line, "bad operand type for unary " + e.name + ": " + v.type_name());
      if (e.name == "+") return v.is_int() ? Value(v.as_int()) : v;
      if (v.is_int()) {
        if (v.as_int() == INT64_MIN) throw_runtime(e.line, "integer overflow");
        return -v.as_int();
      }
      return -v.as_double();
    }
    case Expr::Kind::Binary: return eval_binary(e, scope);
    case Expr::Kind::Ternary:
      if (eval(*e.children[1], scope).truthy()) return eval(*e.children[0], scope);
      return e.children[2] ? eval(*e.children[2], scope) : Value();
    case Expr::Kind::Attribute: {
      Value object = eval(*e.children[0], scope);
      if (object.is_undefined()) {
        throw_runtime(e.line, "cannot read attribute '" + e.name + "' of an undefined value" +
                                  (e.children[0]->kind == Expr::Kind::Name ? " ('" + e.children[0]->name + "')" : ""));
      }
      if (object.is_dict()) {
        if (const Value* v = object.as_dict().find(e.name)) return *v;
      }
      if (auto method = bound_method(object, e.name)) return *method;
      return Value();
    }
    case Expr::Kind::Subscript:
      return subscript(eval(*e.children[0], scope), eval(*e.children[1], scope), e.line);
    case Expr::Kind::Slice: {
      const auto bound = [&](size_t i) { return e.children[i] ? eval(*e.children[i], scope) : Value(); };
      Value result = slice(eval(*e.children[0], scope), bound(1), bound(2), bound(3), e.line);
      charge(result, e.line);
      return result;
    }
    case Expr::Kind::Call: return eval_call(e, scope);
    case Expr::Kind::Filter: {
      Value operand = eval(*e.children[0], scope);
      Value result = apply_filter(*this, e.name, operand, eval_args(e, 1, scope));
      charge(result, e.line);
      return result;
    }
    case Expr::Kind::Test: {
      const bool result = apply_test(e.name, eval(*e.children[0], scope), eval_args(e, 1, scope));
      return e.negated ? !result : result;
    }
  }
  return Value();
}

}  // namespace synapse::chat::jinja
