#include "cli/weight_warmup.h"

#include <cstdint>
#include <vector>

#include "memory/page_cache_reader.h"
#include "progress/progress.h"

namespace synapse::cli {

namespace {
constexpr uint64_t kWorthShowing = 256ull << 20;

// The bytes to read: whole files, or, when layers are dropped, the weights
// the session reads (a dropped layer's are never touched).
std::vector<std::span<const uint8_t>> weight_ranges(const Model& model, const std::vector<bool>& unused) {
  std::vector<std::span<const uint8_t>> ranges;
  if (unused.empty()) {
    for (const auto& file : model.files) ranges.push_back(file->bytes());
    return ranges;
  }
  for (uint32_t w = 0; w < model.graph.weights.size(); ++w)
    if (!unused[w]) ranges.push_back(model.weight_bytes(ir::TensorId{w}));
  return ranges;
}

}  // namespace

void warm_up_weights(const Model& model, const exec::Session& session) {
  if (session.residency()) return;
  const std::vector<bool>& unused = session.scheduler().layer_drop().weights;
  const std::vector<std::span<const uint8_t>> ranges = weight_ranges(model, unused);
  uint64_t total = 0;
  for (const auto& bytes : ranges) total += bytes.size();
  if (total < kWorthShowing) return;
  Progress progress("loading weights", total);
  uint64_t done = 0;
  memory::PageCacheReader reader([&](uint64_t n) { progress.update(done += n); });
  if (unused.empty()) {
    for (const auto& file : model.files) reader.read_file(*file);
    return;
  }
  for (const std::span<const uint8_t> bytes : ranges) reader.read(bytes);
}

}  // namespace synapse::cli
