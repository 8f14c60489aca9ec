// Streams token bytes out as text. Byte-fallback tokens can split a code
// point across tokens, and a model can pick bytes that form no character at
// all, so the stream holds back the bytes of an unfinished sequence until it
// completes and, by default, replaces each ill-formed part with U+FFFD the
// way the Unicode standard recommends (one U+FFFD per maximal subpart, as
// llama.cpp, Python and browsers do): a lone or unexpected byte, a truncated
// sequence, an overlong form, a surrogate or a value above U+10FFFF.
#pragma once

#include <string>
#include <string_view>

namespace synapse {

class Utf8Stream {
 public:
  // Replace: only valid UTF-8 comes out. Keep: the exact bytes (--raw),
  // still never splitting a well-formed sequence across two pushes.
  enum class Invalid { Replace, Keep };

  explicit Utf8Stream(Invalid invalid = Invalid::Replace) : invalid_(invalid) {}

  // Appends bytes; returns the text that is complete so far.
  std::string push(std::string_view bytes);
  // Ends the stream: whatever is held back (a truncated sequence) comes out
  // as one U+FFFD, or as is when keeping the bytes.
  std::string flush();

 private:
  // Moves what is decided of pending_ to the result; a truncated sequence at
  // the end stays pending unless `at_end`.
  std::string drain(bool at_end);

  Invalid invalid_;
  std::string pending_;
};

// `bytes` as valid UTF-8: each ill-formed part replaced with U+FFFD.
std::string valid_utf8(std::string_view bytes);

}  // namespace synapse
