#include "tokenizer/utf8_stream.h"

#include <cstdint>

namespace synapse {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// How far a sequence starting at s[i] is well formed (Unicode Table 3-7).
struct Sequence {
  enum State { Complete, IllFormed, Truncated };  // Truncated: the input ends inside it
  size_t bytes = 0;  // the sequence, or its maximal well-formed prefix (at least 1 byte)
  State state = Complete;
};

Sequence scan(std::string_view s, size_t i) {
  const auto lead = static_cast<uint8_t>(s[i]);
  if (lead < 0x80) return {1, Sequence::Complete};
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return {1, Sequence::IllFormed};  // a continuation byte, C0, C1 or F5..FF: never a lead
  }
  for (size_t n = 1; n < length; ++n) {
    if (i + n == s.size()) return {n, Sequence::Truncated};
    const auto c = static_cast<uint8_t>(s[i + n]);
    if (n == 1 ? (c < low || c > high) : (c & 0xC0) != 0x80) return {n, Sequence::IllFormed};
  }
  return {length, Sequence::Complete};
}

}  // namespace

std::string Utf8Stream::drain(bool at_end) {
  std::string ready;
  ready.reserve(pending_.size());
  size_t i = 0;
  while (i < pending_.size()) {
    const Sequence seq = scan(pending_, i);
    if (seq.state == Sequence::Truncated && !at_end) break;  // may still complete
    if (seq.state == Sequence::Complete || invalid_ == Invalid::Keep) ready.append(pending_, i, seq.bytes);
    else ready += kReplacement;
    i += seq.bytes;
  }
  pending_.erase(0, i);
  return ready;
}

std::string Utf8Stream::push(std::string_view bytes) {
  pending_ += bytes;
  return drain(false);
}

std::string Utf8Stream::flush() { return drain(true); }

std::string valid_utf8(std::string_view bytes) {
  Utf8Stream stream;
  std::string text = stream.push(bytes);
  return text + stream.flush();
}

}  // namespace synapse
