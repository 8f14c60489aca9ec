// Splits Jinja source into text and tag tokens, applying the whitespace
// rules Hugging Face renders chat templates with: one trailing newline
// dropped, lstrip_blocks, trim_blocks, and the `-` markers of {%- -%} etc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace synapse::chat::jinja {

struct Token {
  enum class Kind {
    Text,       // literal template text
    ExprOpen,   // {{
    ExprClose,  // }}
    StmtOpen,   // {%
    StmtClose,  // %}
    Name,
    String,     // value already unescaped
    Int,
    Float,
    Operator,   // punctuation and operators: + - == ( [ | ...
    End,
  };
  Kind kind;
  std::string text;
  int line;  // 1-based line in the original source
};

// Throws synapse::Error (InvalidValue) for unterminated tags, strings and
// characters that cannot start a token.
std::vector<Token> tokenize(std::string_view source);

}  // namespace synapse::chat::jinja
