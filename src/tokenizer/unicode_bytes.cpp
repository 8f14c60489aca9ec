#include "tokenizer/unicode_bytes.h"

#include <array>
#include <cstdio>

namespace synapse {

namespace {

// GPT-2 keeps the printable Latin-1 bytes as their own code point and maps the
// others, in byte order, to U+0100 onwards.
bool maps_to_itself(uint32_t byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

struct ByteLevelTables {
  std::array<std::string, 256> text;  // byte -> UTF-8 of its code point
  std::array<int16_t, 0x144> byte;    // code point -> byte, or -1
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t = [] {
    ByteLevelTables tb;
    tb.byte.fill(-1);
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t cp = maps_to_itself(b) ? b : next++;
      append_utf8(tb.text[b], cp);
      tb.byte[cp] = static_cast<int16_t>(b);
    }
    return tb;
  }();
  return t;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

size_t valid_utf8_sequence_at(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((lead >> 5) == 0x6) {
    len = 2, cp = lead & 0x1F;
  } else if ((lead >> 4) == 0xE) {
    len = 3, cp = lead & 0x0F;
  } else if ((lead >> 3) == 0x1E) {
    len = 4, cp = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(text[pos + k]);
    if ((c >> 6) != 0x2) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

const std::string& byte_to_unicode(uint8_t byte) { return tables().text[byte]; }

std::string bytes_to_unicode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_to_unicode(static_cast<uint8_t>(c));
  return out;
}

std::string unicode_to_bytes(std::string_view text) {
  const auto& inverse = tables().byte;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t len = valid_utf8_sequence_at(text, i);
    if (len == 0) {  // not UTF-8: keep the byte
      out += text[i++];
      continue;
    }
    uint32_t cp = len == 1 ? static_cast<unsigned char>(text[i])
                           : static_cast<unsigned char>(text[i]) & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    if (cp < inverse.size() && inverse[cp] >= 0) {
      out += static_cast<char>(inverse[cp]);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::optional<uint8_t> parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return std::nullopt;
  const int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

std::string byte_piece(uint8_t byte) {
  char buf[7];
  std::snprintf(buf, sizeof buf, "<0x%02X>", byte);
  return buf;
}

}  // namespace synapse
