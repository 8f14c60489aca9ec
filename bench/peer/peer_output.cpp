#include "peer_output.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "peer_error.h"

namespace synapse::peer {

int32_t argmax(std::span<const float> values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

std::vector<int32_t> top_k(std::span<const float> values, size_t k) {
  std::vector<int32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](int32_t a, int32_t b) {
                      return values[a] > values[b] || (values[a] == values[b] && a < b);
                    });
  order.resize(k);
  return order;
}

std::string json_float(float value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  // 9 significant digits identify every float exactly.
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
  return text;
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  file_ = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw PeerError(kExitFailed, "cannot open " + path + " for writing");
}

OutputFile::~OutputFile() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
}

void OutputFile::write(std::span<const float> values) {
  if (std::fwrite(values.data(), sizeof(float), values.size(), file_) != values.size()) {
    throw PeerError(kExitFailed, "write to " + path_ + " failed");
  }
}

void OutputFile::write_text(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw PeerError(kExitFailed, "write to " + path_ + " failed");
  }
}

void OutputFile::close() {
  std::FILE* file = file_;
  file_ = nullptr;
  const bool ok = file == stdout ? std::fflush(file) == 0 : std::fclose(file) == 0;
  if (!ok) throw PeerError(kExitFailed, "write to " + path_ + " failed");
}

}  // namespace synapse::peer
