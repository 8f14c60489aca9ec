#include "memory/huge_page_scan.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

namespace synapse::memory {
namespace {

constexpr uint64_t kWindow = HugePageScan::kWindowBytes;

// Eight 2 MiB windows of anonymous memory, the first four advised for huge
// pages and the last four against them, all written.
class HalfHugeMemory {
 public:
  HalfHugeMemory() {
    raw_ = ::mmap(nullptr, 9 * kWindow, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw_ == MAP_FAILED) return;
    begin_ = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw_) + kWindow - 1) & ~(kWindow - 1));
    ::madvise(begin_, 4 * kWindow, MADV_HUGEPAGE);
    ::madvise(begin_ + 4 * kWindow, 4 * kWindow, MADV_NOHUGEPAGE);
    std::memset(begin_, 1, 8 * kWindow);
  }
  ~HalfHugeMemory() {
    if (raw_ != MAP_FAILED) ::munmap(raw_, 9 * kWindow);
  }
  uint8_t* begin() const { return begin_; }

 private:
  void* raw_ = MAP_FAILED;
  uint8_t* begin_ = nullptr;
};

TEST(HugePageScan, WholeWindowsAreTheAlignedWindowsLyingInsideARange) {
  const auto* base = reinterpret_cast<const uint8_t*>(uintptr_t{64} * kWindow);
  EXPECT_EQ(whole_windows({base, 3 * kWindow}).data(), base);
  EXPECT_EQ(whole_windows({base, 3 * kWindow}).size(), 3 * kWindow);
  EXPECT_EQ(whole_windows({base + 1, 3 * kWindow}).data(), base + kWindow);
  EXPECT_EQ(whole_windows({base + 1, 3 * kWindow}).size(), 2 * kWindow);
  EXPECT_TRUE(whole_windows({base + 1, 2 * kWindow - 2}).empty());
  EXPECT_TRUE(whole_windows({base, kWindow - 1}).empty());
}

// The windows mapped in small pages are found, merged into one run, and
// only windows wholly inside the range asked about are named.
TEST(HugePageScan, NamesTheWholeWindowsOfARangeMappedInSmallPages) {
  const HugePageScan scan;
  if (!scan.available()) GTEST_SKIP() << "the kernel has no PAGEMAP_SCAN (Linux 6.7)";
  const HalfHugeMemory memory;
  ASSERT_NE(memory.begin(), nullptr);
  if (!scan.small_windows({memory.begin(), 4 * kWindow}).empty())
    GTEST_SKIP() << "the kernel gave the advised anonymous memory no 2 MiB pages";
  const auto whole = scan.small_windows({memory.begin(), 8 * kWindow});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].data(), memory.begin() + 4 * kWindow);
  EXPECT_EQ(whole[0].size(), 4 * kWindow);
  // From the middle of window 3 to the middle of window 6: windows 4 and 5.
  const auto part = scan.small_windows({memory.begin() + 3 * kWindow + 4096, 3 * kWindow});
  ASSERT_EQ(part.size(), 1u);
  EXPECT_EQ(part[0].data(), memory.begin() + 4 * kWindow);
  EXPECT_EQ(part[0].size(), 2 * kWindow);
  EXPECT_TRUE(scan.small_windows({memory.begin() + 4 * kWindow + 4096, kWindow}).empty());
}

}  // namespace
}  // namespace synapse::memory
