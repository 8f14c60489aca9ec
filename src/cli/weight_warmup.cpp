#include "cli/weight_warmup.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "progress/progress.h"

namespace synapse::cli {

namespace {
constexpr uint64_t kWorthShowing = 256ull << 20;
constexpr uint64_t kStep = 16ull << 20;  // bytes asked ahead and touched per report

// The bytes to read: whole files, or, when layers are dropped, the weights
// the session reads (a dropped layer's are never touched).
std::vector<std::span<const uint8_t>> weight_ranges(const Model& model, const exec::Session& session) {
  std::vector<std::span<const uint8_t>> ranges;
  const std::vector<bool>& unused = session.scheduler().layer_drop().weights;
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
  const std::vector<std::span<const uint8_t>> ranges = weight_ranges(model, session);
  uint64_t total = 0;
  for (const auto& bytes : ranges) total += bytes.size();
  if (total < kWorthShowing) return;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  Progress progress("loading weights", total);
  uint64_t done = 0;
  for (const std::span<const uint8_t> bytes : ranges) {
    for (uint64_t at = 0; at < bytes.size(); at += kStep) {
      const uint64_t n = std::min<uint64_t>(kStep, bytes.size() - at);
      // Advice only (on whole pages): the reads below fault the pages in either way.
      const auto first = reinterpret_cast<uintptr_t>(bytes.data() + at) & ~(page - 1);
      ::madvise(reinterpret_cast<void*>(first), reinterpret_cast<uintptr_t>(bytes.data() + at + n) - first,
                MADV_WILLNEED);
      // One read per page faults it in (a volatile read is never left out).
      const volatile uint8_t* step = bytes.data() + at;
      for (uint64_t i = 0; i < n; i += page) static_cast<void>(step[i]);
      done += n;
      progress.update(done);
    }
  }
}

}  // namespace synapse::cli
