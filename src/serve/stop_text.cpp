#include "serve/stop_text.h"

#include <algorithm>

namespace synapse::serve {

std::string StopText::push(std::string_view text) {
  if (stopped_) return {};
  pending_ += text;
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, pending_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // Hold back the longest tail that a stop string begins with.
  size_t held = 0;
  for (const std::string& stop : stops_)
    for (size_t n = std::min(stop.size() - 1, pending_.size()); n > held; --n)
      if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
        held = n;
        break;
      }
  std::string out = pending_.substr(0, pending_.size() - held);
  pending_.erase(0, pending_.size() - held);
  return out;
}

std::string StopText::flush() {
  std::string out;
  out.swap(pending_);
  return stopped_ ? std::string() : out;
}

}  // namespace synapse::serve
