#include "tokenizer/piece_decoder.h"

namespace synapse {

namespace {

constexpr int32_t kTokenTypeControl = 3;

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// GPT-2's byte-to-unicode table, inverted: code point -> byte.
std::vector<int> byte_level_inverse() {
  std::vector<int> inverse(0x200, -1);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    inverse[printable ? b : next++] = static_cast<int>(b);
  }
  return inverse;
}

// Decodes one UTF-8 code point at s[i]; returns 0xFFFFFFFF on invalid input.
uint32_t next_code_point(const std::string& s, size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + static_cast<size_t>(len) > s.size()) {
    ++i;
    return 0xFFFFFFFF;
  }
  uint32_t cp = len == 1 ? c : c & (0x7F >> len);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
  i += static_cast<size_t>(len);
  return cp;
}

std::string sentencepiece_bytes(const std::string& piece) {
  // <0xNN> byte-fallback tokens.
  if (piece.size() == 6 && piece.rfind("<0x", 0) == 0 && piece[5] == '>') {
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  }
  std::string out;
  static const std::string kSpace = "\xE2\x96\x81";  // U+2581
  for (size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ';
      i += kSpace.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

std::string byte_level_bytes(const std::string& piece, const std::vector<int>& inverse) {
  std::string out;
  for (size_t i = 0; i < piece.size();) {
    const uint32_t cp = next_code_point(piece, i);
    if (cp < inverse.size() && inverse[cp] >= 0) out += static_cast<char>(inverse[cp]);
    else if (cp != 0xFFFFFFFF) append_utf8(out, cp);  // not a byte-level piece: keep the text
  }
  return out;
}

}  // namespace

std::optional<PieceDecoder> PieceDecoder::from_metadata(const GgufMetadata& m) {
  const GgufValue* model = m.find("tokenizer.ggml.model");
  const GgufValue* tokens = m.find("tokenizer.ggml.tokens");
  if (!model || model->type() != GgufType::String || !tokens || tokens->type() != GgufType::Array ||
      tokens->as_array().elem != GgufType::String)
    return std::nullopt;
  PieceDecoder d;
  if (model->as_string() == "llama") d.style_ = Style::SentencePiece;
  else if (model->as_string() == "gpt2") d.style_ = Style::ByteLevel;
  else return std::nullopt;
  const GgufValue* types = m.find("tokenizer.ggml.token_type");
  const GgufArray* type_array =
      types && types->type() == GgufType::Array && types->as_array().raw.size() > 0 ? &types->as_array() : nullptr;
  const auto inverse = byte_level_inverse();
  const auto& pieces = tokens->as_array().strings;
  d.bytes_.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const bool control = type_array && i < type_array->size() && type_array->int_at(i) == kTokenTypeControl;
    if (control) d.bytes_.emplace_back();
    else if (d.style_ == Style::SentencePiece) d.bytes_.push_back(sentencepiece_bytes(pieces[i]));
    else d.bytes_.push_back(byte_level_bytes(pieces[i], inverse));
  }
  return d;
}

std::string PieceDecoder::piece(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= bytes_.size()) return {};
  return bytes_[static_cast<size_t>(id)];
}

std::string Utf8Stream::push(const std::string& bytes) {
  pending_ += bytes;
  // Find where the last (possibly unfinished) sequence starts.
  size_t cut = pending_.size();
  for (size_t back = 1; back <= 4 && back <= pending_.size(); ++back) {
    const auto c = static_cast<unsigned char>(pending_[pending_.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking
    const size_t need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (need > back) cut = pending_.size() - back;
    break;
  }
  std::string ready = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return ready;
}

std::string Utf8Stream::flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace synapse
