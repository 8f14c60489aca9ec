#include "memory/huge_page_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

#include "memory/huge_page_scan.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

constexpr uint64_t kHugeWindow = HugePageScan::kWindowBytes;

TEST(HugePageBuffer, IsWholeWindowsOnAWindowBoundaryAndStartsZero) {
  const HugePageBuffer buffer(kHugeWindow + 1);
  EXPECT_EQ(buffer.size(), 2 * kHugeWindow);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kHugeWindow, 0u);
  for (uint64_t i = 0; i < buffer.size(); i += 4096) ASSERT_EQ(buffer.data()[i], 0) << i;
  buffer.data()[buffer.size() - 1] = 7;  // writable to its last byte
  EXPECT_EQ(buffer.data()[buffer.size() - 1], 7);
}

// Written whole, the buffer lies in 2 MiB pages where the kernel gives
// anonymous memory any (THP "madvise" or "always"): the page size the
// benchmarks' reads are meant to see.
TEST(HugePageBuffer, WrittenWholeItLiesInHugePagesWhereTheKernelGivesThem) {
  if (!HugePageScan().available()) GTEST_SKIP() << "the kernel has no PAGEMAP_SCAN (Linux 6.7)";
  const std::string mode = transparent_huge_page_mode();
  if (mode != "madvise" && mode != "always") GTEST_SKIP() << "transparent huge pages are '" << mode << "'";
  HugePageBuffer buffer(8 * kHugeWindow);
  std::memset(buffer.data(), 1, buffer.size());
  // A fragmented machine may refuse a few 2 MiB pages; most must come.
  EXPECT_GE(buffer.huge_share(), 0.5);
  EXPECT_LE(buffer.huge_share(), 1.0);
}

TEST(HugePageBuffer, AnEmptyBufferMapsNothing) {
  const HugePageBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.huge_share(), -1);
}

TEST(HugePageBuffer, MovesOwnershipWithoutUnmappingTwice) {
  HugePageBuffer first(kHugeWindow);
  first.data()[0] = 3;
  uint8_t* const data = first.data();
  HugePageBuffer second(std::move(first));
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(first.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(first.size(), 0u);
  HugePageBuffer third(kHugeWindow);
  third = std::move(second);
  EXPECT_EQ(third.data()[0], 3);
}

TEST(HugePageBuffer, ASizeNoMappingCanHoldIsAnInsufficientMemoryError) {
  for (const uint64_t bytes : {UINT64_MAX - 1, uint64_t{1} << 60}) {
    try {
      const HugePageBuffer buffer(bytes);
      ADD_FAILURE() << "mapped " << buffer.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory) << bytes;
    }
  }
}

}  // namespace
}  // namespace synapse::memory
