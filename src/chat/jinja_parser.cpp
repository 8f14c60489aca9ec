#include "chat/jinja_parser.h"

#include <set>

#include "chat/jinja_errors.h"
#include "chat/jinja_expr_parser.h"
#include "chat/jinja_lexer.h"

namespace synapse::chat::jinja {
namespace {

class StatementParser {
 public:
  explicit StatementParser(std::vector<Token> tokens) : tokens_(std::move(tokens)), expr_(tokens_, pos_) {}

  Template run() {
    Template t;
    std::string end_tag = parse_body(t.body, {});
    if (!end_tag.empty()) throw_syntax(tokens_[pos_].line, "unexpected {% " + end_tag + " %}");
    return t;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }

  // Parses statements into `body` until {% X %} for an X in `stops` (returned,
  // with the tag's name consumed) or the end of input (returns "").
  std::string parse_body(Body& body, const std::set<std::string>& stops) {
    if (++depth_ > kMaxNesting) throw_unsupported(peek().line, "blocks nested deeper than " + std::to_string(kMaxNesting));
    while (true) {
      const Token& t = peek();
      switch (t.kind) {
        case Token::Kind::End:
          if (!stops.empty()) throw_syntax(t.line, "missing {% " + *stops.rbegin() + " %} before end of template");
          --depth_;
          return "";
        case Token::Kind::Text: {
          auto s = make(Stmt::Kind::Text, t.line);
          s->text = t.text;
          body.push_back(std::move(s));
          ++pos_;
          break;
        }
        case Token::Kind::ExprOpen: {
          auto s = make(Stmt::Kind::Output, t.line);
          ++pos_;
          s->expr = expr_.parse_expression();
          expect(Token::Kind::ExprClose, "}}");
          body.push_back(std::move(s));
          break;
        }
        case Token::Kind::StmtOpen: {
          ++pos_;
          const Token& keyword = peek();
          if (keyword.kind != Token::Kind::Name) throw_syntax(keyword.line, "expected a statement name after {%");
          if (stops.count(keyword.text)) {
            ++pos_;
            --depth_;
            return keyword.text;
          }
          parse_statement(body);
          break;
        }
        default: throw_syntax(t.line, "unexpected '" + t.text + "'");
      }
    }
  }

  void expect(Token::Kind kind, const char* what) {
    if (peek().kind != kind) throw_syntax(peek().line, std::string("expected ") + what);
    ++pos_;
  }
  void expect_close() { expect(Token::Kind::StmtClose, "%}"); }
  std::string expect_name() {
    if (peek().kind != Token::Kind::Name) throw_syntax(peek().line, "expected a name");
    return tokens_[pos_++].text;
  }
  static StmtPtr make(Stmt::Kind kind, int line) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = line;
    return s;
  }

  void parse_statement(Body& body) {
    const Token keyword = tokens_[pos_++];
    const std::string& k = keyword.text;
    if (k == "if") return body.push_back(parse_if(keyword.line));
    if (k == "for") return body.push_back(parse_for(keyword.line));
    if (k == "set") return body.push_back(parse_set(keyword.line));
    if (k == "macro") return body.push_back(parse_macro(keyword.line));
    if (k == "break" || k == "continue") {
      expect_close();
      return body.push_back(make(k == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, keyword.line));
    }
    if (k == "generation") {
      // transformers' {% generation %} marks assistant text for masks; it renders its body unchanged.
      expect_close();
      parse_body(body, {"endgeneration"});
      return expect_close();
    }
    static const std::set<std::string> kKnownUnsupported = {
        "call", "filter", "include", "import", "from", "extends", "block", "raw", "with", "autoescape", "do"};
    if (kKnownUnsupported.count(k)) throw_unsupported(keyword.line, "{% " + k + " %}");
    throw_syntax(keyword.line, "unknown statement {% " + k + " %}");
  }

  StmtPtr parse_if(int line) {
    auto s = make(Stmt::Kind::If, line);
    s->expr = expr_.parse_expression();
    expect_close();
    const std::string end = parse_body(s->body, {"elif", "else", "endif"});
    if (end == "elif") {
      // Each elif is an If in the else branch: a chain nests as deep as it is long.
      if (++depth_ > kMaxNesting) throw_unsupported(line, "blocks nested deeper than " + std::to_string(kMaxNesting));
      s->else_body.push_back(parse_if(tokens_[pos_ - 1].line));
      --depth_;
    } else if (end == "else") {
      expect_close();
      parse_body(s->else_body, {"endif"});
      expect_close();
    } else {
      expect_close();
    }
    return s;
  }

  StmtPtr parse_for(int line) {
    auto s = make(Stmt::Kind::For, line);
    s->targets.push_back(expect_name());
    while (peek().kind == Token::Kind::Operator && peek().text == ",") {
      ++pos_;
      s->targets.push_back(expect_name());
    }
    if (peek().kind != Token::Kind::Name || peek().text != "in") throw_syntax(peek().line, "expected 'in' in for loop");
    ++pos_;
    s->expr = expr_.parse_expression(/*allow_condition=*/false);
    if (peek().kind == Token::Kind::Name && peek().text == "if") {
      ++pos_;
      s->filter = expr_.parse_expression(/*allow_condition=*/false);
    }
    if (peek().kind == Token::Kind::Name && peek().text == "recursive") throw_unsupported(peek().line, "recursive for loop");
    expect_close();
    const std::string end = parse_body(s->body, {"else", "endfor"});
    if (end == "else") {
      expect_close();
      parse_body(s->else_body, {"endfor"});
    }
    expect_close();
    return s;
  }

  StmtPtr parse_set(int line) {
    std::vector<std::string> targets{expect_name()};
    std::string attribute;
    if (peek().kind == Token::Kind::Operator && peek().text == ".") {
      ++pos_;
      attribute = expect_name();
    }
    while (attribute.empty() && peek().kind == Token::Kind::Operator && peek().text == ",") {
      ++pos_;
      targets.push_back(expect_name());
    }
    if (peek().kind == Token::Kind::StmtClose) {
      if (targets.size() != 1 || !attribute.empty()) throw_unsupported(line, "block set with several targets");
      ++pos_;
      auto s = make(Stmt::Kind::SetBlock, line);
      s->targets = std::move(targets);
      parse_body(s->body, {"endset"});
      expect_close();
      return s;
    }
    if (peek().kind != Token::Kind::Operator || peek().text != "=") throw_syntax(peek().line, "expected '=' in set");
    ++pos_;
    auto s = make(Stmt::Kind::Set, line);
    s->targets = std::move(targets);
    s->attribute = std::move(attribute);
    s->expr = expr_.parse_expression();
    expect_close();
    return s;
  }

  StmtPtr parse_macro(int line) {
    auto s = make(Stmt::Kind::Macro, line);
    s->targets.push_back(expect_name());
    expect(Token::Kind::Operator, "(");
    while (!(peek().kind == Token::Kind::Operator && peek().text == ")")) {
      s->params.push_back(expect_name());
      if (peek().kind == Token::Kind::Operator && peek().text == "=") {
        ++pos_;
        s->defaults.push_back(expr_.parse_expression());
      } else {
        s->defaults.push_back(nullptr);
      }
      if (peek().kind == Token::Kind::Operator && peek().text == ",") {
        ++pos_;
      } else if (!(peek().kind == Token::Kind::Operator && peek().text == ")")) {
        throw_syntax(peek().line, "expected ',' or ')' in macro parameters");
      }
    }
    ++pos_;
    expect_close();
    parse_body(s->body, {"endmacro"});
    expect_close();
    return s;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  ExpressionParser expr_;
  int depth_ = 0;
};

}  // namespace

Template parse_template(std::string_view source) { return StatementParser(tokenize(source)).run(); }

}  // namespace synapse::chat::jinja
