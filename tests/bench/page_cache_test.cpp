#include "page_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/disk_dir.h"

namespace synapse::bench {
namespace {

constexpr size_t kFileBytes = 4u << 20;

// A folder holding one written-back file of kFileBytes, on disk.
struct DiskFolder {
  test::TempDir dir = test::disk_dir();
  std::string file = dir.file("model.gguf");
  bool written = test::write_to_disk(file, kFileBytes, 3);
};

TEST(PageCache, AModelFileAndAFolderOfThemAreDroppedFromThePageCache) {
  const DiskFolder folder;
  ASSERT_TRUE(folder.written);
  for (const std::string& path : {folder.file, folder.dir.path()}) {
    ASSERT_TRUE(reread_into_page_cache(folder.file));
    if (test::cached_pages(folder.file) == 0) GTEST_SKIP() << "this file system keeps no page cache to drop";
    EXPECT_TRUE(drop_from_page_cache(path)) << path;
    EXPECT_EQ(test::cached_pages(folder.file), 0u) << path;
  }
}

TEST(PageCache, ARereadFileIsWhollyInThePageCache) {
  const DiskFolder folder;
  ASSERT_TRUE(folder.written);
  ASSERT_TRUE(drop_from_page_cache(folder.file));
  if (test::cached_pages(folder.file) != 0) GTEST_SKIP() << "the kernel kept the test's file in memory";
  EXPECT_TRUE(reread_into_page_cache(folder.dir.path()));
  EXPECT_EQ(test::cached_pages(folder.file), kFileBytes / 4096);
}

TEST(PageCache, AMissingFileIsReported) {
  EXPECT_FALSE(drop_from_page_cache("/nonexistent/model.gguf"));
  EXPECT_FALSE(reread_into_page_cache("/nonexistent/model.gguf"));
}

}  // namespace
}  // namespace synapse::bench
