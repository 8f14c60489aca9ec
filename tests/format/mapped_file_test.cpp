#include "format/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <vector>

namespace synapse {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kFileBytes = 16u << 20;

// A file of kFileBytes next to the test binary (on disk: a tmpfs file could
// not be dropped from memory), named after the test (tests run at once),
// removed at the end.
class DiskFile {
 public:
  DiskFile()
      : path_(std::filesystem::read_symlink("/proc/self/exe").parent_path() /
              (std::string("mapped_file_test.") + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::vector<char> bytes(kFileBytes, 7);
    written_ = fd >= 0 && ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
               ::fsync(fd) == 0 && ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    if (fd >= 0) ::close(fd);
  }
  ~DiskFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  bool written() const { return written_; }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  bool written_ = false;
};

size_t resident_pages(const MappedFile& file) {
  std::vector<unsigned char> in_core(file.bytes().size() / kPage);
  if (::mincore(const_cast<uint8_t*>(file.bytes().data()), file.bytes().size(), in_core.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

// Paged sessions read the scattered vectors with readahead off: a fault
// must not bring in the megabytes around its page (a 2 MiB huge-page fault
// would, were the mapping left advised for huge pages).
TEST(MappedFile, AFaultWithReadaheadOffReadsOnlyAroundItsPage) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written());
  const MappedFile file(disk.path());
  if (resident_pages(file) != 0) GTEST_SKIP() << "the kernel kept the written file in memory; nothing to measure";
  file.set_readahead(false);
  const volatile uint8_t touched = file.bytes()[kFileBytes / 2 + 100];
  (void)touched;
  EXPECT_LE(resident_pages(file), 16u);
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

TEST(MappedFile, ItsHugePageBytesAreAtMostItsSize) {
  const DiskFile disk;
  ASSERT_TRUE(disk.written());
  const MappedFile file(disk.path());
  uint64_t sum = 0;
  for (size_t at = 0; at < kFileBytes; at += kPage) sum += file.bytes()[at];
  EXPECT_EQ(sum, 7u * (kFileBytes / kPage));
  EXPECT_LE(file.bytes_in_huge_pages(), kFileBytes);
}

}  // namespace
}  // namespace synapse
