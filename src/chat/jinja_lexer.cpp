#include "chat/jinja_lexer.h"

#include <cctype>

#include "chat/jinja_errors.h"
#include "tokenizer/unicode_bytes.h"

namespace synapse::chat::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Source text after the whitespace rules that act on raw text (the same
// rewrite transformers' reference JS engine does), with each byte's line.
struct Prepared {
  std::string text;
  std::vector<int> line_of;  // line_of[i] for text[i]; one extra entry for the end
};

Prepared prepare(std::string_view source) {
  if (!source.empty() && source.back() == '\n') source.remove_suffix(1);
  Prepared out;
  int line = 1;
  size_t line_start_out = 0;  // where the current output line began
  bool only_blanks_on_line = true;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    const bool block_open = c == '{' && i + 1 < source.size() && (source[i + 1] == '%' || source[i + 1] == '#');
    // lstrip_blocks: blanks before a block or comment tag that starts a line go.
    if (block_open && only_blanks_on_line) {
      out.text.resize(line_start_out);
      out.line_of.resize(line_start_out);
    }
    out.text += c;
    out.line_of.push_back(line);
    if (c == '\n') {
      ++line;
      line_start_out = out.text.size();
      only_blanks_on_line = true;
    } else if (c != ' ' && c != '\t') {
      only_blanks_on_line = false;
    }
    // trim_blocks: the newline right after a block or comment tag goes.
    if (c == '}' && i > 0 && (source[i - 1] == '%' || source[i - 1] == '#') && i + 1 < source.size() &&
        source[i + 1] == '\n') {
      ++i;
      ++line;
      line_start_out = out.text.size();
      only_blanks_on_line = true;
    }
  }
  out.line_of.push_back(line);
  return out;
}

class Lexer {
 public:
  explicit Lexer(Prepared prepared) : p_(std::move(prepared)) {}

  std::vector<Token> run() {
    while (pos_ < src().size()) {
      lex_text();
      if (pos_ >= src().size()) break;
      lex_tag();
    }
    tokens_.push_back({Token::Kind::End, "", line()});
    return std::move(tokens_);
  }

 private:
  const std::string& src() const { return p_.text; }
  int line() const { return p_.line_of[std::min(pos_, src().size())]; }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src().size() ? src()[pos_ + ahead] : '\0'; }
  [[noreturn]] void fail(const std::string& what) const { throw_syntax(line(), what); }

  void lex_text() {
    const size_t start = pos_;
    while (pos_ < src().size() && !(peek() == '{' && (peek(1) == '{' || peek(1) == '%' || peek(1) == '#'))) ++pos_;
    if (pos_ > start) tokens_.push_back({Token::Kind::Text, src().substr(start, pos_ - start), p_.line_of[start]});
  }

  // The text token before a {%- / {{- / {#- loses its trailing whitespace.
  void strip_previous_text() {
    if (tokens_.empty() || tokens_.back().kind != Token::Kind::Text) return;
    std::string& text = tokens_.back().text;
    while (!text.empty() && is_space(text.back())) text.pop_back();
    if (text.empty()) tokens_.pop_back();
  }
  void skip_following_space() {
    while (pos_ < src().size() && is_space(peek())) ++pos_;
  }

  void lex_tag() {
    const char kind = peek(1);
    const int open_line = line();
    pos_ += 2;
    if (peek() == '-') {
      strip_previous_text();
      ++pos_;
    } else if (peek() == '+') {
      ++pos_;  // {%+ keeps the blanks lstrip_blocks would remove; prepare() already decided
    }
    if (kind == '#') return lex_comment(open_line);
    const bool is_expr = kind == '{';
    tokens_.push_back({is_expr ? Token::Kind::ExprOpen : Token::Kind::StmtOpen, is_expr ? "{{" : "{%", open_line});
    const char close = is_expr ? '}' : '%';
    int brace_depth = 0;  // a dict literal's } must not end {{ ... }}
    while (true) {
      while (pos_ < src().size() && is_space(peek())) ++pos_;
      if (pos_ >= src().size()) throw_syntax(open_line, std::string("unterminated ") + (is_expr ? "{{ tag" : "{% tag"));
      if (peek() == '-' && peek(1) == close && peek(2) == '}' && brace_depth == 0) {
        pos_ += 3;
        tokens_.push_back({is_expr ? Token::Kind::ExprClose : Token::Kind::StmtClose, "", line()});
        skip_following_space();
        return;
      }
      if (peek() == close && peek(1) == '}' && brace_depth == 0) {
        pos_ += 2;
        tokens_.push_back({is_expr ? Token::Kind::ExprClose : Token::Kind::StmtClose, "", line()});
        return;
      }
      if (peek() == '{') ++brace_depth;
      if (peek() == '}') --brace_depth;
      lex_expression_token();
    }
  }

  void lex_comment(int open_line) {
    const size_t end = src().find("#}", pos_);
    if (end == std::string::npos) throw_syntax(open_line, "unterminated {# comment");
    const bool strip_after = end > pos_ && src()[end - 1] == '-';
    pos_ = end + 2;
    if (strip_after) skip_following_space();
  }

  void lex_expression_token() {
    const char c = peek();
    const int at = line();
    if (c == '\'' || c == '"') return lex_string(c);
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number();
    if (is_name_start(c)) {
      const size_t start = pos_;
      while (pos_ < src().size() && is_name_char(peek())) ++pos_;
      tokens_.push_back({Token::Kind::Name, src().substr(start, pos_ - start), at});
      return;
    }
    static constexpr std::string_view kTwoChar[] = {"**", "//", "==", "!=", "<=", ">="};
    for (std::string_view op : kTwoChar) {
      if (src().compare(pos_, 2, op) == 0) {
        pos_ += 2;
        tokens_.push_back({Token::Kind::Operator, std::string(op), at});
        return;
      }
    }
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != std::string_view::npos) {
      ++pos_;
      tokens_.push_back({Token::Kind::Operator, std::string(1, c), at});
      return;
    }
    fail(std::string("unexpected character '") + c + "' in tag");
  }

  void lex_number() {
    const size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
    bool is_float = false;
    if (peek() == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
      is_float = true;
      ++pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      const size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
      if (std::isdigit(static_cast<unsigned char>(peek(1 + sign)))) {
        is_float = true;
        pos_ += 1 + sign;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      }
    }
    std::string text;
    for (size_t i = start; i < pos_; ++i) {
      if (src()[i] != '_') text += src()[i];
    }
    tokens_.push_back({is_float ? Token::Kind::Float : Token::Kind::Int, text, line()});
  }

  // Python string-literal escapes; an unknown escape keeps its backslash.
  void lex_string(char quote) {
    const int open_line = line();
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= src().size()) throw_syntax(open_line, "unterminated string literal");
      const char c = src()[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src().size()) throw_syntax(open_line, "unterminated string literal");
      const char e = src()[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '0': value += '\0'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (size_t k = 0; k < digits; ++k) {
            const char h = peek();
            if (!std::isxdigit(static_cast<unsigned char>(h))) fail(std::string("bad \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            ++pos_;
          }
          if (cp > 0x10FFFF) fail("escape beyond U+10FFFF in string literal");
          synapse::append_utf8(value, cp);
          break;
        }
        default:
          value += '\\';
          value += e;
      }
    }
    tokens_.push_back({Token::Kind::String, std::move(value), open_line});
  }

  Prepared p_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(prepare(source)).run(); }

}  // namespace synapse::chat::jinja
