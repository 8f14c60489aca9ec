#include "tokenizer/spm_tokenizer.h"

#include "tokenizer/symbol_merger.h"
#include "tokenizer/unicode_bytes.h"

namespace synapse {

namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581 "▁"

std::string collapse_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocabulary vocabulary) : Tokenizer(std::move(vocabulary)) {}

std::string SpmTokenizer::normalize(std::string_view text, bool after_special) const {
  const std::string trimmed = vocab_.remove_extra_whitespaces ? collapse_spaces(text) : std::string(text);
  std::string out;
  if (trimmed.empty()) return out;
  if (vocab_.add_dummy_prefix && after_special) out += kSpaceSymbol;
  for (char c : trimmed) {
    if (c == ' ') {
      out += kSpaceSymbol;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<int32_t> SpmTokenizer::mergeable_id(std::string_view piece) const {
  const std::optional<int32_t> id = vocab_.find(piece);
  if (!id) return std::nullopt;
  const TokenType t = vocab_.type(*id);
  if (t != TokenType::Normal && t != TokenType::UserDefined) return std::nullopt;
  return id;
}

void SpmTokenizer::emit_bytes(std::string_view piece, std::vector<int32_t>& out) const {
  std::vector<int32_t> bytes;
  for (char c : piece) {
    const auto id = vocab_.find(byte_piece(static_cast<uint8_t>(c)));
    if (!id) {
      // No byte fallback: the whole character is one UNK, as in SentencePiece.
      if (vocab_.unk_id) out.push_back(*vocab_.unk_id);
      return;
    }
    bytes.push_back(*id);
  }
  out.insert(out.end(), bytes.begin(), bytes.end());
}

void SpmTokenizer::encode_text(std::string_view raw, bool after_special, std::vector<int32_t>& out) const {
  const std::string text = normalize(raw, after_special);
  if (text.empty()) return;
  // Every merge makes a token, so only single characters can be missing from
  // the vocabulary: those go to byte fallback.
  const std::vector<MergeSymbol> symbols = merge_symbols(
      text, character_symbols(text), [&](std::string_view left, std::string_view right) -> std::optional<double> {
        const std::optional<int32_t> id = mergeable_id(std::string(left).append(right));
        if (!id) return std::nullopt;
        return -static_cast<double>(vocab_.score(*id));  // higher score merges first
      });
  for (int i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
    const MergeSymbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = std::string_view(text).substr(s.offset, s.length);
    if (const auto id = mergeable_id(piece)) {
      out.push_back(*id);
    } else {
      emit_bytes(piece, out);
    }
  }
}

std::string SpmTokenizer::piece_bytes(int32_t id) const {
  const std::string& piece = vocab_.tokens[static_cast<size_t>(id)];
  if (vocab_.type(id) == TokenType::Byte) {
    if (const auto byte = parse_byte_piece(piece)) return std::string(1, static_cast<char>(*byte));
  }
  std::string out;
  for (size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
      out += ' ';
      i += kSpaceSymbol.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

}  // namespace synapse
