// Which 2 MiB windows of this process's memory are mapped in small pages,
// read from the page tables (the PAGEMAP_SCAN ioctl of /proc/self/pagemap,
// Linux 6.7). /proc/self/smaps totals a mapping's 2 MiB pages; this says
// where the rest lie, so a reader can read those windows afresh.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace synapse::memory {

// The 2 MiB-aligned windows lying wholly inside `range`, as one span
// (empty when none does).
std::span<const uint8_t> whole_windows(std::span<const uint8_t> range);

class HugePageScan {
 public:
  static constexpr uint64_t kWindowBytes = 2ull << 20;

  HugePageScan();
  ~HugePageScan();
  HugePageScan(const HugePageScan&) = delete;
  HugePageScan& operator=(const HugePageScan&) = delete;

  // False where the kernel cannot say (before 6.7, or no /proc).
  bool available() const { return pagemap_ >= 0; }

  // The 2 MiB-aligned windows inside `range` that hold a present page
  // mapped in a page smaller than 2 MiB, adjacent ones merged, in address
  // order. Empty where the kernel cannot say.
  std::vector<std::span<const uint8_t>> small_windows(std::span<const uint8_t> range) const;

 private:
  int pagemap_ = -1;
};

}  // namespace synapse::memory
