#include "memory/huge_page_scan.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace synapse::memory {

namespace {

// The kernel's struct pm_scan_arg and struct page_region (linux/fs.h since
// 6.7; the build's headers may be older), and the categories used here.
struct ScanArg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
      category_anyof_mask, return_mask;
};
struct PageRegion {
  uint64_t start, end, categories;
};
constexpr uint64_t kPresent = 1 << 3;  // PAGE_IS_PRESENT
constexpr uint64_t kHuge = 1 << 6;     // PAGE_IS_HUGE: a THP or hugetlb mapping
constexpr unsigned long kPagemapScan = _IOWR('f', 16, ScanArg);

constexpr uint64_t kRegionsPerCall = 64;

// Fills `regions` with the present pages of [start, end), runs of pages
// alike merged; returns how many (-1 on failure) and sets walk_end to
// where the walk stopped (end, unless `regions` filled up first).
int64_t scan(int pagemap, uint64_t start, uint64_t end, PageRegion (&regions)[kRegionsPerCall], uint64_t& walk_end) {
  ScanArg arg{};
  arg.size = sizeof(arg);
  arg.start = start;
  arg.end = end;
  arg.vec = reinterpret_cast<uint64_t>(regions);
  arg.vec_len = kRegionsPerCall;
  arg.category_mask = kPresent;
  arg.return_mask = kPresent | kHuge;
  const int n = ::ioctl(pagemap, kPagemapScan, &arg);
  walk_end = arg.walk_end;
  return n;
}

}  // namespace

HugePageScan::HugePageScan() : pagemap_(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) {
  if (pagemap_ < 0) return;
  // A kernel without the ioctl refuses it: try one on a page of the stack.
  static_assert(sizeof(ScanArg) == 96 && sizeof(PageRegion) == 24);
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto here = reinterpret_cast<uint64_t>(&page) & ~(page - 1);
  PageRegion regions[kRegionsPerCall];
  uint64_t walk_end = 0;
  if (scan(pagemap_, here, here + page, regions, walk_end) < 0) {
    ::close(pagemap_);
    pagemap_ = -1;
  }
}

HugePageScan::~HugePageScan() {
  if (pagemap_ >= 0) ::close(pagemap_);
}

std::span<const uint8_t> whole_windows(std::span<const uint8_t> range) {
  constexpr uint64_t kWindow = HugePageScan::kWindowBytes;
  const auto first = (reinterpret_cast<uint64_t>(range.data()) + kWindow - 1) & ~(kWindow - 1);
  const auto last = (reinterpret_cast<uint64_t>(range.data()) + range.size()) & ~(kWindow - 1);
  if (first >= last) return {};
  return {reinterpret_cast<const uint8_t*>(first), last - first};
}

std::vector<std::span<const uint8_t>> HugePageScan::small_windows(std::span<const uint8_t> range) const {
  std::vector<std::span<const uint8_t>> windows;
  const std::span<const uint8_t> whole = whole_windows(range);
  if (pagemap_ < 0 || whole.empty()) return windows;
  const auto first = reinterpret_cast<uint64_t>(whole.data());
  const uint64_t last = first + whole.size();
  PageRegion regions[kRegionsPerCall];
  for (uint64_t at = first; at < last;) {
    uint64_t walk_end = 0;
    const int64_t n = scan(pagemap_, at, last, regions, walk_end);
    if (n < 0) return {};
    for (int64_t i = 0; i < n; ++i) {
      if (regions[i].categories & kHuge) continue;
      const uint64_t from = regions[i].start & ~(kWindowBytes - 1);
      const uint64_t to = std::min(last, (regions[i].end + kWindowBytes - 1) & ~(kWindowBytes - 1));
      const auto* p = reinterpret_cast<const uint8_t*>(from);
      if (!windows.empty() && windows.back().data() + windows.back().size() >= p) {
        const uint8_t* begin = windows.back().data();
        windows.back() = {begin, std::max<uint64_t>(windows.back().size(), to - reinterpret_cast<uint64_t>(begin))};
      } else {
        windows.emplace_back(p, to - from);
      }
    }
    if (walk_end <= at) break;  // no progress: never loop
    at = walk_end;
  }
  return windows;
}

}  // namespace synapse::memory
