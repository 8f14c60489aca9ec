#include "memory/page_cache_reader.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "memory/huge_page_scan.h"
#include "support/disk_dir.h"

namespace synapse::memory {
namespace {

constexpr uint64_t kReadFileBytes = 64ull << 20;
constexpr uint64_t kHugePageBytes = 2ull << 20;

// Takes every third 2 MiB range of `path` past its first 16 MiB out of the
// page cache, as memory pressure evicts whole folios; false when it cannot
// be advised. The first 16 MiB stay: holes there would make the reader's
// probe read the whole file afresh, hiding how it fills holes.
bool evict_every_third_huge_range(const std::string& path) {
  for (off_t at = 8 * kHugePageBytes; at < static_cast<off_t>(kReadFileBytes); at += 3 * kHugePageBytes)
    if (!test::drop_cached(path, at, kHugePageBytes)) return false;
  return true;
}

// Reads the ranges that evict_every_third_huge_range evicted back with
// read(2), 4 KiB at a time, as another program would: into small page-cache
// folios. False on any failure.
bool read_back_evicted_ranges(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::vector<char> page(4096);
  bool read_all = true;
  for (off_t at = 8 * kHugePageBytes; at < static_cast<off_t>(kReadFileBytes); at += 3 * kHugePageBytes)
    for (off_t offset = at; offset < at + static_cast<off_t>(kHugePageBytes); offset += 4096)
      read_all = read_all && ::pread(fd, page.data(), page.size(), offset) == static_cast<ssize_t>(page.size());
  ::close(fd);
  return read_all;
}

// The share of the file at `path` that a new mapping maps in 2 MiB pages
// once a PageCacheReader has read it.
double huge_share_after_reading(const std::string& path) {
  const MappedFile file(path);
  PageCacheReader().read_file(file);
  return static_cast<double>(file.bytes_in_huge_pages()) / kReadFileBytes;
}

// A file whose page cache lost some of its 2 MiB folios comes back in 2 MiB
// pages about as fully as a cold one: the holes are not filled with the
// small folios of a readahead advice.
TEST(PageCacheReader, AFilePartlyEvictedFromThePageCacheComesBackInHugePagesAsAColdOne) {
  const test::TempDir dir = test::disk_dir();
  const std::string path = dir.file("weights.bin");
  ASSERT_TRUE(test::write_to_disk(path, kReadFileBytes, 3) && test::drop_cached(path));
  const double cold = huge_share_after_reading(path);
  if (cold < 0.5) GTEST_SKIP() << "the kernel or file system mapped only " << cold << " of a cold file in 2 MiB pages";
  ASSERT_TRUE(evict_every_third_huge_range(path));
  // Two of the 32 huge pages may be missing; readahead advice for every
  // step lost four (0.75 against a cold 0.875).
  EXPECT_GE(huge_share_after_reading(path), cold - 2.0 * kHugePageBytes / kReadFileBytes);
}

// Parts of a file that another program read back into small page-cache
// folios after their eviction are read afresh, into 2 MiB ones.
TEST(PageCacheReader, PartsOfAFileAnotherProgramReadInSmallPagesComeBackInHugePages) {
  if (!HugePageScan().available()) GTEST_SKIP() << "the kernel has no PAGEMAP_SCAN (Linux 6.7)";
  const test::TempDir dir = test::disk_dir();
  const std::string path = dir.file("weights.bin");
  ASSERT_TRUE(test::write_to_disk(path, kReadFileBytes, 5) && test::drop_cached(path));
  const double cold = huge_share_after_reading(path);
  if (cold < 0.5) GTEST_SKIP() << "the kernel or file system mapped only " << cold << " of a cold file in 2 MiB pages";
  ASSERT_TRUE(evict_every_third_huge_range(path) && read_back_evicted_ranges(path));
  // Without the reread, 8 of the 32 huge pages are missing.
  EXPECT_GE(huge_share_after_reading(path), cold - 2.0 * kHugePageBytes / kReadFileBytes);
}

}  // namespace
}  // namespace synapse::memory
