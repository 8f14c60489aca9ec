#include "chat/jinja_expr_parser.h"

#include <algorithm>
#include <charconv>

#include "chat/jinja_builtins.h"
#include "chat/jinja_errors.h"
#include "chat/jinja_parser.h"

namespace synapse::chat::jinja {
namespace {

ExprPtr make(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

// Bounds recursion: every nested sub-expression passes through parse_unary.
class DepthGuard {
 public:
  DepthGuard(int& depth, int line) : depth_(depth) {
    if (++depth_ > kMaxNesting) throw_unsupported(line, "expressions nested deeper than " + std::to_string(kMaxNesting));
  }
  ~DepthGuard() { --depth_; }

 private:
  int& depth_;
};

// Appends child to e's children, keeping the tree within
// kMaxExpressionHeight (an absent optional part is a null child).
void adopt(Expr& e, ExprPtr child) {
  if (child) {
    e.height = std::max(e.height, child->height + 1);
    if (e.height > kMaxExpressionHeight)
      throw_unsupported(e.line, "expressions more than " + std::to_string(kMaxExpressionHeight) + " operations deep");
  }
  e.children.push_back(std::move(child));
}

}  // namespace

const Token& ExpressionParser::peek(size_t ahead) const {
  const size_t i = pos_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}
bool ExpressionParser::at_operator(const char* op, size_t ahead) const {
  return peek(ahead).kind == Token::Kind::Operator && peek(ahead).text == op;
}
bool ExpressionParser::at_name(const char* name) const {
  return peek().kind == Token::Kind::Name && peek().text == name;
}
void ExpressionParser::expect_operator(const char* op) {
  if (!at_operator(op)) throw_syntax(peek().line, std::string("expected '") + op + "'");
  ++pos_;
}
ExprPtr ExpressionParser::binary(std::string op, ExprPtr lhs, ExprPtr rhs, int line) {
  auto e = make(Expr::Kind::Binary, line);
  e->name = std::move(op);
  adopt(*e, std::move(lhs));
  adopt(*e, std::move(rhs));
  return e;
}

ExprPtr ExpressionParser::parse_expression(bool allow_condition) {
  ExprPtr value = parse_or();
  while (allow_condition && at_name("if")) {
    const int line = peek().line;
    ++pos_;
    auto e = make(Expr::Kind::Ternary, line);
    adopt(*e, std::move(value));
    adopt(*e, parse_or());
    if (at_name("else")) {
      ++pos_;
      const DepthGuard guard(depth_, line);  // `a if c else b if d else ...` recurses here
      adopt(*e, parse_expression());
    } else {
      adopt(*e, nullptr);
    }
    value = std::move(e);
  }
  return value;
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr lhs = parse_and();
  while (at_name("or")) {
    const int line = tokens_[pos_++].line;
    lhs = binary("or", std::move(lhs), parse_and(), line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr lhs = parse_not();
  while (at_name("and")) {
    const int line = tokens_[pos_++].line;
    lhs = binary("and", std::move(lhs), parse_not(), line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_not() {
  if (!at_name("not")) return parse_compare();
  DepthGuard guard(depth_, peek().line);
  auto e = make(Expr::Kind::Unary, tokens_[pos_++].line);
  e->name = "not";
  adopt(*e, parse_not());
  return e;
}

ExprPtr ExpressionParser::parse_compare() {
  ExprPtr lhs = parse_additive();
  while (true) {
    const int line = peek().line;
    std::string op;
    if (peek().kind == Token::Kind::Operator &&
        (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
         peek().text == "<=" || peek().text == ">=")) {
      op = tokens_[pos_++].text;
    } else if (at_name("in")) {
      ++pos_;
      op = "in";
    } else if (at_name("not") && peek(1).kind == Token::Kind::Name && peek(1).text == "in") {
      pos_ += 2;
      op = "not in";
    } else {
      return lhs;
    }
    lhs = binary(std::move(op), std::move(lhs), parse_additive(), line);
  }
}

ExprPtr ExpressionParser::parse_additive() {
  ExprPtr lhs = parse_concat();
  while (at_operator("+") || at_operator("-")) {
    const Token& op = tokens_[pos_++];
    lhs = binary(op.text, std::move(lhs), parse_concat(), op.line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr lhs = parse_multiplicative();
  while (at_operator("~")) {
    const int line = tokens_[pos_++].line;
    lhs = binary("~", std::move(lhs), parse_multiplicative(), line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_multiplicative() {
  ExprPtr lhs = parse_power();
  while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
    const Token& op = tokens_[pos_++];
    lhs = binary(op.text, std::move(lhs), parse_power(), op.line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_power() {
  ExprPtr lhs = parse_unary();
  while (at_operator("**")) {
    const int line = tokens_[pos_++].line;
    lhs = binary("**", std::move(lhs), parse_unary(), line);
  }
  return lhs;
}

ExprPtr ExpressionParser::parse_unary(bool with_filters) {
  DepthGuard guard(depth_, peek().line);
  ExprPtr node;
  if (at_operator("-") || at_operator("+")) {
    // As in Jinja2, filters apply to the negated value: -2|abs is 2.
    node = make(Expr::Kind::Unary, peek().line);
    node->name = tokens_[pos_++].text;
    adopt(*node, parse_unary(/*with_filters=*/false));
  } else {
    node = parse_postfix(parse_primary());
  }
  while (with_filters) {
    if (at_operator("|")) {
      node = parse_postfix(parse_filter(std::move(node)));
    } else if (at_name("is")) {
      node = parse_test(std::move(node));
    } else {
      break;
    }
  }
  return node;
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& t = peek();
  switch (t.kind) {
    case Token::Kind::Name: {
      ++pos_;
      auto e = make(Expr::Kind::Literal, t.line);
      if (t.text == "true" || t.text == "True") e->value = true;
      else if (t.text == "false" || t.text == "False") e->value = false;
      else if (t.text == "none" || t.text == "None") e->value = Value::none();
      else {
        e->kind = Expr::Kind::Name;
        e->name = t.text;
      }
      return e;
    }
    case Token::Kind::String: {
      auto e = make(Expr::Kind::Literal, t.line);
      std::string text;
      while (peek().kind == Token::Kind::String) text += tokens_[pos_++].text;  // 'a' 'b' == 'ab'
      e->value = std::move(text);
      return e;
    }
    case Token::Kind::Int: {
      ++pos_;
      int64_t v = 0;
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc()) throw_unsupported(t.line, "integer literal " + t.text + " beyond 64 bits");
      auto e = make(Expr::Kind::Literal, t.line);
      e->value = v;
      return e;
    }
    case Token::Kind::Float: {
      ++pos_;
      auto e = make(Expr::Kind::Literal, t.line);
      e->value = std::strtod(t.text.c_str(), nullptr);
      return e;
    }
    case Token::Kind::Operator:
      if (t.text == "(") {
        ++pos_;
        if (at_operator(")")) {
          ++pos_;
          return make(Expr::Kind::Tuple, t.line);
        }
        ExprPtr first = parse_expression();
        if (!at_operator(",")) {
          expect_operator(")");
          return first;
        }
        auto tuple = make(Expr::Kind::Tuple, t.line);
        adopt(*tuple, std::move(first));
        while (at_operator(",")) {
          ++pos_;
          if (at_operator(")")) break;
          adopt(*tuple, parse_expression());
        }
        expect_operator(")");
        return tuple;
      }
      if (t.text == "[") {
        ++pos_;
        return parse_sequence(Expr::Kind::List, "]", t.line);
      }
      if (t.text == "{") {
        ++pos_;
        return parse_dict(t.line);
      }
      break;
    default: break;
  }
  throw_syntax(t.line, t.kind == Token::Kind::End || t.kind == Token::Kind::ExprClose || t.kind == Token::Kind::StmtClose
                           ? "expression expected before end of tag"
                           : "unexpected '" + t.text + "' in expression");
}

ExprPtr ExpressionParser::parse_sequence(Expr::Kind kind, const char* close, int line) {
  auto e = make(kind, line);
  while (!at_operator(close)) {
    adopt(*e, parse_expression());
    if (!at_operator(",")) break;
    ++pos_;
  }
  expect_operator(close);
  return e;
}

ExprPtr ExpressionParser::parse_dict(int line) {
  auto e = make(Expr::Kind::Dict, line);
  while (!at_operator("}")) {
    adopt(*e, parse_expression());
    expect_operator(":");
    adopt(*e, parse_expression());
    if (!at_operator(",")) break;
    ++pos_;
  }
  expect_operator("}");
  return e;
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr node) {
  while (true) {
    const int line = peek().line;
    if (at_operator(".")) {
      ++pos_;
      auto e = make(Expr::Kind::Attribute, line);
      if (peek().kind == Token::Kind::Int) {  // x.0 is x[0] in Jinja
        e->kind = Expr::Kind::Subscript;
        adopt(*e, std::move(node));
        adopt(*e, parse_primary());
      } else {
        if (peek().kind != Token::Kind::Name) throw_syntax(line, "expected an attribute name after '.'");
        e->name = tokens_[pos_++].text;
        adopt(*e, std::move(node));
      }
      node = std::move(e);
    } else if (at_operator("[")) {
      ++pos_;
      node = parse_subscript(std::move(node));
    } else if (at_operator("(")) {
      auto e = make(Expr::Kind::Call, line);
      adopt(*e, std::move(node));
      parse_call_args(*e);
      node = std::move(e);
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(ExprPtr object) {
  const int line = peek().line;
  ExprPtr start = at_operator(":") ? nullptr : parse_expression();
  if (!at_operator(":")) {
    expect_operator("]");
    auto e = make(Expr::Kind::Subscript, line);
    adopt(*e, std::move(object));
    adopt(*e, std::move(start));
    return e;
  }
  auto e = make(Expr::Kind::Slice, line);
  adopt(*e, std::move(object));
  adopt(*e, std::move(start));
  for (int part = 0; part < 2; ++part) {
    if (at_operator(":")) {
      ++pos_;
      adopt(*e, at_operator(":") || at_operator("]") ? nullptr : parse_expression());
    } else {
      adopt(*e, nullptr);
    }
  }
  expect_operator("]");
  return e;
}

void ExpressionParser::parse_call_args(Expr& node) {
  expect_operator("(");
  while (!at_operator(")")) {
    if (at_operator("*") || at_operator("**")) throw_unsupported(peek().line, "*args/**kwargs in a call");
    if (peek().kind == Token::Kind::Name && at_operator("=", 1)) {
      node.arg_names.push_back(tokens_[pos_].text);
      pos_ += 2;
    } else {
      node.arg_names.push_back("");
    }
    adopt(node, parse_expression());
    if (!at_operator(",")) break;
    ++pos_;
  }
  expect_operator(")");
}

ExprPtr ExpressionParser::parse_filter(ExprPtr operand) {
  ++pos_;  // '|'
  if (peek().kind != Token::Kind::Name) throw_syntax(peek().line, "expected a filter name after '|'");
  auto e = make(Expr::Kind::Filter, peek().line);
  e->name = tokens_[pos_++].text;
  if (!is_known_filter(e->name)) throw_unsupported(e->line, "filter '" + e->name + "'");
  adopt(*e, std::move(operand));
  if (at_operator("(")) parse_call_args(*e);
  return e;
}

ExprPtr ExpressionParser::parse_test(ExprPtr operand) {
  ++pos_;  // 'is'
  auto e = make(Expr::Kind::Test, peek().line);
  if (at_name("not")) {
    ++pos_;
    e->negated = true;
  }
  if (peek().kind != Token::Kind::Name) throw_syntax(peek().line, "expected a test name after 'is'");
  e->name = tokens_[pos_++].text;
  if (!is_known_test(e->name)) throw_unsupported(e->line, "test '" + e->name + "'");
  adopt(*e, std::move(operand));
  if (at_operator("(")) {
    parse_call_args(*e);
    return e;
  }
  // A single bare argument, as in `x is divisibleby 3` or `x is sameas false`.
  const Token& next = peek();
  const bool starts_argument =
      next.kind == Token::Kind::String || next.kind == Token::Kind::Int || next.kind == Token::Kind::Float ||
      (next.kind == Token::Kind::Name && next.text != "else" && next.text != "or" && next.text != "and" &&
       next.text != "if" && next.text != "in" && next.text != "is" && next.text != "not") ||
      at_operator("[") || at_operator("{");
  if (starts_argument) {
    e->arg_names.push_back("");
    adopt(*e, parse_postfix(parse_primary()));
  }
  return e;
}

}  // namespace synapse::chat::jinja
