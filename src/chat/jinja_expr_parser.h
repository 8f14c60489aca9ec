// Expression grammar of Jinja2, by precedence from loosest to tightest:
// `a if c else b`, or, and, not, comparisons/in, + -, ~, * / // %, **,
// unary - +, then primaries with .attr [index] [a:b:c] (call) |filter `is test`.
#pragma once

#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"

namespace synapse::chat::jinja {

class ExpressionParser {
 public:
  // Reads tokens[pos] onward, advancing pos (shared with the statement parser).
  ExpressionParser(const std::vector<Token>& tokens, size_t& pos) : tokens_(tokens), pos_(pos) {}

  // allow_condition=false leaves a trailing `if` for the caller (for-loop filters).
  ExprPtr parse_expression(bool allow_condition = true);

 private:
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_additive();
  ExprPtr parse_concat();
  ExprPtr parse_multiplicative();
  ExprPtr parse_power();
  ExprPtr parse_unary(bool with_filters = true);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr object);
  ExprPtr parse_filter(ExprPtr operand);
  ExprPtr parse_test(ExprPtr operand);
  void parse_call_args(Expr& node);
  ExprPtr parse_sequence(Expr::Kind kind, const char* close, int line);
  ExprPtr parse_dict(int line);

  const Token& peek(size_t ahead = 0) const;
  bool at_operator(const char* op, size_t ahead = 0) const;
  bool at_name(const char* name) const;
  void expect_operator(const char* op);
  ExprPtr binary(std::string op, ExprPtr lhs, ExprPtr rhs, int line);

  const std::vector<Token>& tokens_;
  size_t& pos_;
  int depth_ = 0;
};

}  // namespace synapse::chat::jinja
