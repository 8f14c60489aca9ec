// The parsed form of a template: expressions and statements as plain tagged
// structs. The parser builds them; the evaluator walks them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chat/jinja_value.h"

namespace synapse::chat::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,    // value
    Name,       // name
    List,       // children: elements
    Tuple,      // children: elements (evaluates to a list)
    Dict,       // children: key0, value0, key1, value1, ...
    Unary,      // name: "not" or "-" or "+"; children: operand
    Binary,     // name: operator ("+", "and", "in", "not in", ...); children: lhs, rhs
    Ternary,    // children: value, condition, else-value (may be null)
    Attribute,  // name: attribute; children: object
    Subscript,  // children: object, index
    Slice,      // children: object, start, stop, step (each may be null)
    Call,       // children: callee, arguments...; arg_names as below
    Filter,     // name: filter; children: operand, arguments...
    Test,       // name: test; children: operand, arguments...; negated for `is not`
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> children;
  // For Call/Filter/Test: the keyword of each argument (children after the
  // callee/operand), "" for positional ones.
  std::vector<std::string> arg_names;
  bool negated = false;
  int height = 1;  // nodes on the longest path down from here (the parser bounds it)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // expr: condition; body; else_body (an elif is a nested If there)
    For,       // targets: loop variables; expr: iterable; filter: `if` clause; body; else_body
    Set,       // targets (several for tuple unpacking); attribute for `ns.attr`; expr
    SetBlock,  // targets[0] = rendered body
    Macro,     // targets[0]: name; params/defaults; body
    Break,
    Continue,
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<std::string> targets;
  std::string attribute;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // parallel to params; null where there is none
  Body body;
  Body else_body;
};

struct Template {
  Body body;
};

}  // namespace synapse::chat::jinja
