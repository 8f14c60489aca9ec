#include "cli/weight_warmup.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "progress/progress.h"

namespace synapse::cli {

namespace {
constexpr uint64_t kWorthShowing = 256ull << 20;
constexpr uint64_t kStep = 16ull << 20;  // bytes asked ahead and touched per report
}  // namespace

void warm_up_weights(const Model& model, const exec::Session& session) {
  if (session.residency()) return;
  uint64_t total = 0;
  for (const auto& file : model.files) total += file->bytes().size();
  if (total < kWorthShowing) return;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  Progress progress("loading weights", total);
  uint64_t done = 0;
  for (const auto& file : model.files) {
    const std::span<const uint8_t> bytes = file->bytes();
    for (uint64_t at = 0; at < bytes.size(); at += kStep) {
      const uint64_t n = std::min<uint64_t>(kStep, bytes.size() - at);
      // Advice only: the reads below fault the pages in either way.
      ::madvise(const_cast<uint8_t*>(bytes.data() + at), n, MADV_WILLNEED);
      // One read per page faults it in (a volatile read is never left out).
      const volatile uint8_t* step = bytes.data() + at;
      for (uint64_t i = 0; i < n; i += page) static_cast<void>(step[i]);
      done += n;
      progress.update(done);
    }
  }
}

}  // namespace synapse::cli
