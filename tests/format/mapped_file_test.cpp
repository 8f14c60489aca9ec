#include "format/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "support/disk_dir.h"

namespace synapse {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kFileBytes = 16u << 20;

// A written-back file of kFileBytes, on disk and out of the page cache.
struct DiskFile {
  test::TempDir dir = test::disk_dir();
  std::string path = dir.file("weights.bin");
  bool written = test::write_to_disk(path, kFileBytes, 7) && test::drop_cached(path);
};

// Paged sessions read the scattered vectors with readahead off: a fault
// must not bring in the megabytes around its page (a 2 MiB huge-page fault
// would, were the mapping left advised for huge pages).
TEST(MappedFile, AFaultWithReadaheadOffReadsOnlyAroundItsPage) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written);
  const MappedFile file(disk.path);
  if (test::cached_pages(disk.path) != 0) GTEST_SKIP() << "the kernel kept the written file in memory";
  file.set_readahead(false);
  const volatile uint8_t touched = file.bytes()[kFileBytes / 2 + 100];
  (void)touched;
  EXPECT_LE(test::cached_pages(disk.path), 16u);
}

TEST(MappedFile, HugePageBytesCountOnlyTheMappingsOverlappingTheRange) {
  const std::string smaps =
      "00400000-00600000 r--s 00000000 fe:00 1     /other\n"
      "Size:               2048 kB\n"
      "FilePmdMapped:      2048 kB\n"
      "7f0000000000-7f0000400000 r--s 00000000 fe:00 2     /model.gguf\n"
      "Size:               4096 kB\n"
      "AnonHugePages:         0 kB\n"
      "FilePmdMapped:      2048 kB\n"
      "VmFlags: rd mr me ms hg\n"
      "7f0000400000-7f0000600000 r--s 00400000 fe:00 2     /model.gguf\n"
      "FilePmdMapped:      2048 kB\n";
  const auto bytes = [&](uintptr_t begin, uintptr_t end) {
    std::istringstream in(smaps);
    return smaps_huge_page_bytes(in, begin, end);
  };
  EXPECT_EQ(bytes(0x7f0000000000, 0x7f0000600000), 4u << 20);
  EXPECT_EQ(bytes(0x7f0000100000, 0x7f0000200000), 2u << 20);
  EXPECT_EQ(bytes(0x00500000, 0x7f0000000000), 2u << 20);  // ends where the model's mapping starts
  EXPECT_EQ(bytes(0x1000, 0x2000), 0u);
}

TEST(MappedFile, AFilesMappingPagesCountOnlyTheMappingsNamingThatFile) {
  const std::string smaps =
      "00400000-00600000 r--s 00000000 fe:00 1     /models/a b.gguf\n"
      "Size:               2048 kB\n"
      "FilePmdMapped:      2048 kB\n"
      "00600000-00a00000 r--s 00200000 fe:00 1     /models/a b.gguf\n"
      "FilePmdMapped:         0 kB\n"
      "00a00000-00c00000 r--s 00000000 fe:00 2     /models/a b.gguf.part\n"
      "FilePmdMapped:      2048 kB\n"
      "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
      "FilePmdMapped:         0 kB\n";
  const auto pages = [&](const std::string& path) {
    std::istringstream in(smaps);
    return smaps_file_mapping_pages(in, path);
  };
  const FileMappingPages model = pages("/models/a b.gguf");
  EXPECT_EQ(model.mapped, 6u << 20);
  EXPECT_EQ(model.in_huge_pages, 2u << 20);
  EXPECT_EQ(pages("/models/a").mapped, 0u);  // a prefix of a mapped path is another file
  EXPECT_EQ(pages("/models/other.gguf").in_huge_pages, 0u);
}

// One byte of every page of a DiskFile's mapping, summed (which faults
// every page in): 7 per page.
uint64_t sum_of_pages(const MappedFile& file) {
  uint64_t sum = 0;
  for (size_t at = 0; at < kFileBytes; at += kPage) sum += file.bytes()[at];
  return sum;
}

TEST(MappedFile, ItsHugePageBytesAreAtMostItsSize) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written);
  const MappedFile file(disk.path);
  EXPECT_EQ(sum_of_pages(file), 7u * (kFileBytes / kPage));
  EXPECT_LE(file.bytes_in_huge_pages(), kFileBytes);
}

// The loader reads a file written shortly before once more from the disk
// (memory/page_cache_reader.cpp): a dropped range leaves the page cache and the
// mapping, and reads the same bytes when touched again.
TEST(MappedFile, ARangeDroppedFromThePageCacheLeavesItAndReadsTheSameBytes) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written);
  const MappedFile file(disk.path);
  ASSERT_EQ(sum_of_pages(file), 7u * (kFileBytes / kPage));
  ASSERT_TRUE(file.drop_from_page_cache(kFileBytes / 2, kFileBytes));  // past the end: up to it
  EXPECT_LE(test::cached_pages(disk.path), kFileBytes / 2 / kPage);
  EXPECT_EQ(sum_of_pages(file), 7u * (kFileBytes / kPage));
}

// A dropped range is mapped anew in place (to shed its page tables): the
// mapping stays where it was and reads the same bytes, also for a range
// that starts inside a page.
TEST(MappedFile, ADroppedRangeIsMappedAnewInPlace) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written);
  const MappedFile file(disk.path);
  const uint8_t* before = file.bytes().data();
  ASSERT_EQ(sum_of_pages(file), 7u * (kFileBytes / kPage));
  ASSERT_TRUE(file.drop_from_page_cache(2u << 20, 4u << 20));
  ASSERT_TRUE(file.drop_from_page_cache(kPage / 2, kPage));
  EXPECT_EQ(file.bytes().data(), before);
  EXPECT_EQ(sum_of_pages(file), 7u * (kFileBytes / kPage));
}

// A memory file's bytes exist nowhere else: it is never dropped.
TEST(MappedFile, AMemoryFileIsNeverDroppedFromThePageCache) {
  const auto file = MappedFile::in_memory("rows", 4 * kPage, [](std::span<uint8_t> bytes) {
    for (uint8_t& b : bytes) b = 5;
  });
  EXPECT_FALSE(file->drop_from_page_cache(0, 4 * kPage));
  for (size_t at = 0; at < 4 * kPage; at += 97) ASSERT_EQ(file->bytes()[at], 5);
}

}  // namespace
}  // namespace synapse
