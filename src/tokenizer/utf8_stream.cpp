#include "tokenizer/utf8_stream.h"

namespace synapse {

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
