#include "page_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

namespace synapse::bench {
namespace {

constexpr size_t kFileBytes = 4u << 20;

// A folder holding one written-back file of kFileBytes, next to the test
// binary (on disk: tmpfs pages cannot be dropped) and named after the test
// (tests run at once), removed at the end.
class DiskFolder {
 public:
  DiskFolder()
      : dir_(std::filesystem::read_symlink("/proc/self/exe").parent_path() /
             (std::string("page_cache_test.") + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::create_directories(dir_);
    const int fd = ::open(file().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::vector<char> bytes(kFileBytes, 3);
    written_ = fd >= 0 && ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
               ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
  }
  ~DiskFolder() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool written() const { return written_; }
  std::string dir() const { return dir_.string(); }
  std::string file() const { return (dir_ / "model.gguf").string(); }

 private:
  std::filesystem::path dir_;
  bool written_ = false;
};

// Pages of `path` in the page cache, read through a mapping's mincore.
size_t cached_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void* p = ::mmap(nullptr, kFileBytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  std::vector<unsigned char> in_core(kFileBytes / 4096);
  ::mincore(p, kFileBytes, in_core.data());
  ::munmap(p, kFileBytes);
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

TEST(PageCache, AModelFileAndAFolderOfThemAreDroppedFromThePageCache) {
  const DiskFolder folder;
  ASSERT_TRUE(folder.written());
  for (const std::string& path : {folder.file(), folder.dir()}) {
    ASSERT_TRUE(reread_into_page_cache(folder.file()));
    if (cached_pages(folder.file()) == 0) GTEST_SKIP() << "this file system keeps no page cache to drop";
    EXPECT_TRUE(drop_from_page_cache(path)) << path;
    EXPECT_EQ(cached_pages(folder.file()), 0u) << path;
  }
}

TEST(PageCache, ARereadFileIsWhollyInThePageCache) {
  const DiskFolder folder;
  ASSERT_TRUE(folder.written());
  ASSERT_TRUE(drop_from_page_cache(folder.file()));
  if (cached_pages(folder.file()) != 0) GTEST_SKIP() << "the kernel kept the test's file in memory";
  EXPECT_TRUE(reread_into_page_cache(folder.dir()));
  EXPECT_EQ(cached_pages(folder.file()), kFileBytes / 4096);
}

TEST(PageCache, AMissingFileIsReported) {
  EXPECT_FALSE(drop_from_page_cache("/nonexistent/model.gguf"));
  EXPECT_FALSE(reread_into_page_cache("/nonexistent/model.gguf"));
}

}  // namespace
}  // namespace synapse::bench
