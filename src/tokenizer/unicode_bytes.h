// UTF-8 helpers and GPT-2's byte-level mapping (each byte to a printable code
// point, so that byte-level BPE pieces are valid UTF-8 text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace synapse {

// Length of the UTF-8 sequence that `lead` starts, from its bits alone (1 for
// a stray continuation byte); callers clamp it to the bytes left.
size_t utf8_sequence_length(unsigned char lead);

// Length of the well-formed UTF-8 sequence at text[pos], or 0 when the bytes
// there are not one (truncated, overlong, surrogate, out of range).
size_t valid_utf8_sequence_at(std::string_view text, size_t pos);

void append_utf8(std::string& out, uint32_t code_point);

// The UTF-8 text of the code point GPT-2 maps `byte` to.
const std::string& byte_to_unicode(uint8_t byte);
// Maps every byte of `bytes` to its code point.
std::string bytes_to_unicode(std::string_view bytes);
// Inverts bytes_to_unicode; code points outside the mapping are kept as text.
std::string unicode_to_bytes(std::string_view text);

// The byte a SentencePiece byte-fallback piece "<0xNN>" stands for.
std::optional<uint8_t> parse_byte_piece(std::string_view piece);
std::string byte_piece(uint8_t byte);

}  // namespace synapse
