#include "tokenizer/nfc.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "tokenizer/unicode_bytes.h"

namespace synapse {

namespace {

// Appends the NFC form of valid UTF-8 `run`.
void append_nfc(std::string& out, std::string_view run) {
  if (run.empty()) return;
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
                                          static_cast<utf8proc_ssize_t>(run.size()), &mapped,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(mapped, &std::free);
  // utf8proc refuses what it does not take for UTF-8 (e.g. noncharacters
  // in some versions): such a run stays as it is.
  if (n < 0) {
    out.append(run);
  } else {
    out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  }
}

}  // namespace

std::string nfc_normalize(std::string_view text) {
  // ASCII is its own NFC form: the common case costs one scan.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t run_start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = valid_utf8_sequence_at(text, pos);
    if (len > 0) {
      pos += len;
      continue;
    }
    append_nfc(out, text.substr(run_start, pos - run_start));
    out += text[pos];
    run_start = ++pos;
  }
  append_nfc(out, text.substr(run_start));
  return out;
}

}  // namespace synapse
