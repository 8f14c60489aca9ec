// The residency manager on a hand-made plan over a scratch file: chunks hold
// the file's bytes once acquired, a pinned chunk is never evicted, reads
// interrupted by EINTR or cut short are retried, an I/O error leaves the
// manager usable, prefetching never holds more than the pool, and the pool
// shrinks by evicting (never below one region, never a chunk in use) and
// grows back.
#include "memory/weight_residency.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "memory/huge_page_buffer.h"
#include "memory/huge_page_scan.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

constexpr uint64_t kChunkBytes = 10000;  // not a multiple of the page size
constexpr uint64_t kFirstOffset = 123;   // nor aligned
constexpr uint32_t kChunks = 6;

struct ScratchFile {
  test::TempDir dir;
  std::string path = dir.file("weights.bin");
  std::vector<uint8_t> bytes;
  ScratchFile() {
    bytes.resize(kFirstOffset + kChunks * kChunkBytes + 77);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 131) ^ (i >> 8));
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
  }
};

// One weight per chunk; a pool of `pool_chunks` chunks.
ResidencyPlan plan_of(uint32_t pool_chunks, uint32_t pinned = 0) {
  ResidencyPlan plan;
  for (uint32_t c = 0; c < kChunks; ++c) {
    Chunk chunk;
    chunk.weight = ir::TensorId{c};
    chunk.offset = kFirstOffset + c * kChunkBytes;
    chunk.bytes = kChunkBytes;
    chunk.row_end = 10;
    chunk.pinned = c < pinned;
    plan.chunks.push_back(chunk);
    plan.weights.push_back(WeightChunks{c, 1, 10, kChunkBytes / 10, false});
    plan.weight_bytes += kChunkBytes;
    if (chunk.pinned) plan.pinned_bytes += kChunkBytes;
  }
  plan.pool_bytes = pool_chunks * kChunkBytes;
  plan.min_pool_bytes = kChunkBytes;
  plan.paging = true;
  return plan;
}

void expect_holds_file_bytes(const WeightResidency& residency, const ScratchFile& file, uint32_t c) {
  const uint8_t* data = residency.data(ir::TensorId{c});
  ASSERT_EQ(0, std::memcmp(data, file.bytes.data() + kFirstOffset + c * kChunkBytes, kChunkBytes)) << "chunk " << c;
}

TEST(WeightResidency, AcquiredChunksHoldTheFileBytesAndCountTheirLoad) {
  ScratchFile file;
  WeightResidency residency({file.path}, plan_of(3, 1), ResidencyOptions{});
  expect_holds_file_bytes(residency, file, 0);  // pinned: loaded up front
  const uint32_t wanted[] = {1, 2};
  EXPECT_EQ(residency.acquire(wanted).loaded, 2 * kChunkBytes);
  expect_holds_file_bytes(residency, file, 1);
  expect_holds_file_bytes(residency, file, 2);
  residency.release(wanted);
  EXPECT_EQ(residency.acquire(wanted).loaded, 0u);  // still resident: nothing loaded
  residency.release(wanted);
  const ResidencyCounters c = residency.counters();
  EXPECT_EQ(c.misses, 2u);
  EXPECT_EQ(c.hits, 2u);
}

// A dense model's weights are read in the same order every step. A pool
// that holds three of the six then loads three or four per step, as the
// best possible policy would (the least recently used is the next one
// read: LRU, or decayed LFU, would load all six every step).
TEST(WeightResidency, WeightsReadInTheSameOrderEveryStepKeepWhatThePoolHasRoomFor) {
  ScratchFile file;
  WeightResidency residency({file.path}, plan_of(3), ResidencyOptions{});
  const auto step = [&] {
    for (uint32_t c = 0; c < kChunks; ++c) {
      const uint32_t chunk[] = {c};
      residency.acquire(chunk);
      expect_holds_file_bytes(residency, file, c);
      residency.release(chunk);
    }
  };
  step();
  ASSERT_EQ(residency.counters().loads, kChunks);
  for (int s = 0; s < 4; ++s) {
    const uint64_t before = residency.counters().loads;
    step();
    const uint64_t loads = residency.counters().loads - before;
    EXPECT_GE(loads, kChunks - 3) << "step " << s;
    EXPECT_LE(loads, kChunks - 2) << "step " << s;
  }
}

// The 2 MiB windows wholly inside a chunk are filled in 2 MiB pages when
// it loads (fewer faults per load, no TLB misses in decode) and freed with
// it when it is evicted.
TEST(WeightResidency, WholeWindowsOfALoadedChunkLieInHugePagesAndLeaveWithIt) {
  const HugePageScan scan;
  if (!scan.available()) GTEST_SKIP() << "the kernel has no PAGEMAP_SCAN (Linux 6.7)";
  constexpr uint64_t kWindow = HugePageScan::kWindowBytes;
  {
    HugePageBuffer probe(2 * kWindow);
    std::memset(probe.data(), 1, probe.size());
    if (probe.huge_share() < 1) GTEST_SKIP() << "the kernel gives advised memory no 2 MiB pages now";
  }
  test::TempDir dir;
  const std::string path = dir.file("big.bin");
  std::vector<uint8_t> bytes(4 * kWindow);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  // Chunk 0: three windows and more; chunk 1, after it, needs the whole
  // pool, so loading it evicts chunk 0.
  ResidencyPlan plan;
  const uint64_t offsets[] = {4096 + 100, 3 * kWindow + 8192}, sizes[] = {3 * kWindow + 5000, 10000};
  for (uint32_t c = 0; c < 2; ++c) {
    Chunk chunk;
    chunk.weight = ir::TensorId{c};
    chunk.offset = offsets[c];
    chunk.bytes = sizes[c];
    chunk.row_end = 1;
    plan.chunks.push_back(chunk);
    plan.weights.push_back(WeightChunks{c, 1, 1, sizes[c], false});
    plan.weight_bytes += sizes[c];
  }
  plan.pool_bytes = plan.min_pool_bytes = sizes[0];
  plan.paging = true;
  WeightResidency residency({path}, plan, ResidencyOptions{});
  const uint32_t first_chunk[] = {0}, second_chunk[] = {1};
  residency.acquire(first_chunk);
  const uint8_t* data = residency.data(ir::TensorId{0});
  ASSERT_EQ(0, std::memcmp(data, bytes.data() + offsets[0], sizes[0]));
  const std::span<const uint8_t> whole = whole_windows({data, sizes[0]});
  ASSERT_GE(whole.size(), 2 * kWindow);
  EXPECT_TRUE(scan.small_windows(whole).empty());
  residency.release(first_chunk);
  residency.acquire(second_chunk);
  EXPECT_EQ(residency.counters().evictions, 1u);
  std::vector<unsigned char> resident(whole.size() / 4096);
  ASSERT_EQ(0, ::mincore(const_cast<uint8_t*>(whole.data()), whole.size(), resident.data()));
  for (size_t page = 0; page < resident.size(); ++page) ASSERT_EQ(resident[page] & 1, 0) << "page " << page;
  residency.release(second_chunk);
}

TEST(WeightResidency, ChunkInUseIsNeverEvicted) {
  ScratchFile file;
  WeightResidency residency({file.path}, plan_of(2), ResidencyOptions{});
  const uint32_t held = 0;
  residency.acquire({&held, 1});
  for (uint32_t round = 0; round < 3; ++round)
    for (uint32_t c = 1; c < kChunks; ++c) {  // each load must evict the other free chunk, never `held`
      residency.acquire({&c, 1});
      expect_holds_file_bytes(residency, file, held);
      expect_holds_file_bytes(residency, file, c);
      residency.release({&c, 1});
    }
  residency.release({&held, 1});
  EXPECT_LE(residency.counters().peak_resident_bytes, 2 * kChunkBytes);
}

TEST(WeightResidency, PoolTooSmallForWhatIsPinnedFailsWithInsufficientMemory) {
  ScratchFile file;
  WeightResidency residency({file.path}, plan_of(1), ResidencyOptions{});
  const uint32_t both[] = {1, 2};
  try {
    residency.acquire(both);
    FAIL() << "two chunks acquired in a one-chunk pool";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
  }
  const uint32_t one = 2;  // the failed acquisition released chunk 1
  residency.acquire({&one, 1});
  expect_holds_file_bytes(residency, file, one);
  residency.release({&one, 1});
}

// Fails reads as told: EINTR and short reads first, then an error while
// `fail` is set.
class FlakyFile final : public ChunkFile {
 public:
  FlakyFile(const std::string& path, bool direct, int* interruptions, bool* fail)
      : ChunkFile(path, direct), interruptions_(interruptions), fail_(fail) {}

 protected:
  ssize_t pread_once(void* dst, size_t length, uint64_t offset, bool direct) override {
    if (*fail_) {
      errno = EIO;
      return -1;
    }
    if (*interruptions_ > 0) {
      --*interruptions_;
      if (*interruptions_ % 2 == 0) {
        errno = EINTR;
        return -1;
      }
      // A short read: a few bytes (whole blocks when direct).
      length = std::min<size_t>(length, direct ? kAlign : 100);
    }
    return ChunkFile::pread_once(dst, length, offset, direct);
  }

 private:
  int* interruptions_;
  bool* fail_;
};

ResidencyOptions flaky(int* interruptions, bool* fail) {
  ResidencyOptions options;
  options.open_file = [=](const std::string& path, bool direct) {
    return std::make_unique<FlakyFile>(path, direct, interruptions, fail);
  };
  return options;
}

TEST(WeightResidency, InterruptedAndShortReadsAreRetried) {
  ScratchFile file;
  int interruptions = 0;
  bool fail = false;
  WeightResidency residency({file.path}, plan_of(kChunks), flaky(&interruptions, &fail));
  for (uint32_t c = 0; c < kChunks; ++c) {
    interruptions = 9;
    residency.acquire({&c, 1});
    expect_holds_file_bytes(residency, file, c);
    residency.release({&c, 1});
  }
}

TEST(WeightResidency, ReadErrorFailsTheAcquisitionAndALaterOneSucceeds) {
  ScratchFile file;
  int interruptions = 0;
  bool fail = true;
  WeightResidency residency({file.path}, plan_of(2), flaky(&interruptions, &fail));
  const uint32_t chunks[] = {3, 4};
  try {
    residency.acquire(chunks);
    FAIL() << "acquired through a failing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  fail = false;
  residency.acquire(chunks);  // the pool was left empty and unpinned
  expect_holds_file_bytes(residency, file, 3);
  expect_holds_file_bytes(residency, file, 4);
  residency.release(chunks);
}

TEST(WeightResidency, PrefetchStaysWithinThePoolAndItsQueue) {
  ScratchFile file;
  ResidencyOptions options;
  options.prefetch_queue = 2;
  WeightResidency residency({file.path}, plan_of(3), options);
  std::vector<uint32_t> all(kChunks);
  for (uint32_t c = 0; c < kChunks; ++c) all[c] = c;
  for (int round = 0; round < 20; ++round) {
    residency.prefetch(all);  // at most 2 queued, the rest dropped
    const uint32_t c = static_cast<uint32_t>(round) % kChunks;
    residency.acquire({&c, 1});
    expect_holds_file_bytes(residency, file, c);
    residency.release({&c, 1});
  }
  const ResidencyCounters counters = residency.counters();
  EXPECT_LE(counters.peak_resident_bytes, 3 * kChunkBytes);
  EXPECT_LE(counters.prefetch_used, counters.prefetched);
  EXPECT_LE(counters.prefetched, 20u * 2u);
}

TEST(WeightResidency, ShrinkingEvictsUnpinnedChunksDownToOneRegionAndGrowingGivesRoomBack) {
  ScratchFile file;
  WeightResidency residency({file.path}, plan_of(4), ResidencyOptions{});
  for (uint32_t c = 0; c < 4; ++c) {  // fill the pool
    residency.acquire({&c, 1});
    residency.release({&c, 1});
  }
  const uint32_t held = 3;
  residency.acquire({&held, 1});
  EXPECT_EQ(residency.shrink(2 * kChunkBytes), 2 * kChunkBytes);
  ResidencyCounters counters = residency.counters();
  EXPECT_EQ(counters.pool_bytes, 2 * kChunkBytes);
  EXPECT_EQ(counters.resident_bytes, 2 * kChunkBytes);
  EXPECT_EQ(counters.evictions, 2u);
  // The floor is one region (one chunk here), and the chunk in use stays.
  EXPECT_EQ(residency.shrink(10 * kChunkBytes), kChunkBytes);
  EXPECT_EQ(residency.counters().pool_bytes, kChunkBytes);
  expect_holds_file_bytes(residency, file, held);
  EXPECT_EQ(residency.shrink(kChunkBytes), 0u);
  const uint32_t other = 0;
  residency.release({&held, 1});
  residency.grow(kChunkBytes);  // room for two again: both load, nothing evicted
  const uint64_t evictions = residency.counters().evictions;
  residency.acquire({&held, 1});
  residency.acquire({&other, 1});
  expect_holds_file_bytes(residency, file, other);
  residency.release({&other, 1});
  residency.release({&held, 1});
  counters = residency.counters();
  EXPECT_EQ(counters.evictions, evictions);
  EXPECT_EQ(counters.resident_bytes, 2 * kChunkBytes);
}

}  // namespace
}  // namespace synapse::memory
