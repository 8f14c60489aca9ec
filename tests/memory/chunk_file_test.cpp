// ChunkFile: a chunk's read writes its own bytes of the mirror and no
// neighbour's, with O_DIRECT too (whose blocks the neighbours share), and
// concurrent reads that find O_DIRECT refused all fall back safely.
#include "memory/chunk_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace synapse::memory {
namespace {

constexpr uint64_t kAlign = ChunkFile::kAlign;
constexpr uint8_t kSentinel = 0xa5;  // in the mirror where no read may write

// A file of `bytes` bytes, byte i = (i * 7 + i / 251) % 256: never kSentinel
// over long runs, and different from block to block.
std::vector<uint8_t> write_file(const std::string& path, uint64_t bytes) {
  std::vector<uint8_t> content(bytes);
  for (uint64_t i = 0; i < bytes; ++i) content[i] = static_cast<uint8_t>((i * 7 + i / 251) % 256);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(content.data()),
                                              static_cast<std::streamsize>(bytes));
  return content;
}

// An aligned mirror of a file of `bytes` bytes, rounded up to kAlign, all kSentinel.
struct Mirror {
  explicit Mirror(uint64_t bytes) : size((bytes + kAlign - 1) / kAlign * kAlign) {
    data.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, size)));
    std::fill(data.get(), data.get() + size, kSentinel);
  }
  uint64_t size;
  std::unique_ptr<uint8_t, decltype(&std::free)> data{nullptr, &std::free};
};

// mirror holds the file's bytes on [begin, end) and kSentinel everywhere else.
void expect_only_range_written(const Mirror& mirror, const std::vector<uint8_t>& content, uint64_t begin,
                               uint64_t end) {
  for (uint64_t i = 0; i < mirror.size; ++i) {
    const uint8_t want = i >= begin && i < end ? content[i] : kSentinel;
    ASSERT_EQ(mirror.data.get()[i], want) << "byte " << i << " of a read of [" << begin << ", " << end << ")";
  }
}

TEST(ChunkFile, DirectReadWritesNoByteOfTheNeighboursSharingItsBlocks) {
  test::TempDir dir;
  const uint64_t size = 5 * kAlign + 100;  // the last block is partial
  const std::vector<uint8_t> content = write_file(dir.file("w.bin"), size);
  ChunkFile file(dir.file("w.bin"), true);
  if (!file.direct()) GTEST_SKIP() << "the temporary folder's file system refuses O_DIRECT";
  struct Range {
    uint64_t begin, end;
  };
  // Unaligned at both ends across blocks, inside one block, aligned, aligned
  // start with a partial end, and up to the file's unaligned end.
  for (const Range r : {Range{5000, 11000}, Range{4200, 4300}, Range{kAlign, 3 * kAlign}, Range{kAlign, 2 * kAlign + 7},
                        Range{3 * kAlign + 1, size}}) {
    Mirror mirror(size);
    file.read(mirror.data.get(), r.begin, r.end - r.begin);
    expect_only_range_written(mirror, content, r.begin, r.end);
  }
  EXPECT_TRUE(file.direct());
}

// Refuses every O_DIRECT read as a file system without it does (EINVAL).
class NoDirectReads final : public ChunkFile {
 public:
  using ChunkFile::ChunkFile;

 protected:
  ssize_t pread_once(void* dst, size_t length, uint64_t offset, bool direct) override {
    if (direct) {
      errno = EINVAL;
      return -1;
    }
    return ChunkFile::pread_once(dst, length, offset, direct);
  }
};

// Under ThreadSanitizer this also proves the fallback flag is shared safely.
TEST(ChunkFile, ConcurrentReadsRefusedDirectIoAllFallBackToBufferedReads) {
  test::TempDir dir;
  constexpr int kThreads = 4;
  const uint64_t size = kThreads * 2 * kAlign;
  const std::vector<uint8_t> content = write_file(dir.file("w.bin"), size);
  NoDirectReads file(dir.file("w.bin"), true);
  if (!file.direct()) GTEST_SKIP() << "the temporary folder's file system refuses O_DIRECT";
  Mirror mirror(size);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)  // each its own chunk, not block aligned
    threads.emplace_back([&, t] { file.read(mirror.data.get(), t * 2 * kAlign + 3, 2 * kAlign - 6); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(file.direct());
  for (int t = 0; t < kThreads; ++t)
    for (uint64_t i = t * 2 * kAlign + 3; i < (t + 1) * 2 * kAlign - 3; ++i)
      ASSERT_EQ(mirror.data.get()[i], content[i]) << "byte " << i;
}

}  // namespace
}  // namespace synapse::memory
