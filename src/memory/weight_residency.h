// The residency manager (SPEC §8): keeps the plan's pinned chunks loaded
// and pages the others through a bounded pool. Each weight file has a
// mirror, an address range reserved (not committed) at load where file
// offset o lives at base + o, so a weight's address never changes and the
// kernels' pointers are bound once; a chunk is Unloaded, Queued (for the
// I/O thread), Loading or Resident, filled with pread and released with
// madvise(MADV_DONTNEED). A chunk in use holds a pin and is never evicted;
// eviction picks among unpinned resident chunks with the policy. A
// background I/O thread loads chunks ahead on request (bounded queue);
// a request that finds its chunk loading waits, so output never depends on
// what was prefetched. The pool is elastic (a MemoryLedger may lend it to
// other categories): shrinking evicts unpinned chunks, down to what one
// region needs at once; growing gives it room again.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "memory/chunk_file.h"
#include "memory/eviction_policy.h"
#include "memory/memory_budget.h"
#include "memory/residency_plan.h"

namespace synapse::memory {

struct ResidencyOptions {
  std::string policy = "lfu";
  int prefetch_queue = 64;  // chunks waiting for the I/O thread at most
  bool direct_io = true;   // O_DIRECT where the file system allows it
  // Opens a weight file (tests inject failing readers); null: ChunkFile.
  std::function<std::unique_ptr<ChunkFile>(const std::string& path, bool direct)> open_file;
  // Called as the constructor loads the pinned chunks: (bytes loaded, bytes
  // to load). For a progress report; null: none.
  std::function<void(uint64_t, uint64_t)> on_pinned_load;
};

// What an acquisition brought in from disk: bytes loaded since its chunks
// were last acquired, and of those, the bytes a prefetch loaded ahead.
struct LoadedBytes {
  uint64_t loaded = 0;
  uint64_t prefetched = 0;
  LoadedBytes& operator+=(const LoadedBytes& other) {
    loaded += other.loaded;
    prefetched += other.prefetched;
    return *this;
  }
};

struct ResidencyCounters {
  uint64_t bytes_loaded = 0;  // read from disk: demand loads, prefetches and row reads
  uint64_t loads = 0;         // chunks loaded
  uint64_t hits = 0;          // acquisitions of a paged chunk found resident
  uint64_t misses = 0;        // acquisitions that had to load (or wait for a load)
  uint64_t prefetched = 0;    // chunks loaded ahead
  uint64_t prefetch_used = 0; // of those, used before being evicted
  uint64_t evictions = 0;     // chunks evicted to make room
  uint64_t resident_bytes = 0;       // chunks resident or loading now
  uint64_t peak_resident_bytes = 0;
  uint64_t pool_bytes = 0;           // what the pool may hold now
};

class WeightResidency final : public ElasticReservation {
 public:
  // Reserves the mirrors (the paths are the model's weight files) and loads
  // the pinned chunks. Throws Error(Io) or Error(Usage) (unknown policy).
  WeightResidency(std::vector<std::string> files, ResidencyPlan plan, const ResidencyOptions& options);
  ~WeightResidency() override;
  WeightResidency(const WeightResidency&) = delete;
  WeightResidency& operator=(const WeightResidency&) = delete;

  const ResidencyPlan& plan() const { return plan_; }
  // Where weight w's bytes are once its chunks are loaded.
  const uint8_t* data(ir::TensorId w) const;

  // Loads what is not resident and pins every chunk. Throws Error(Io) with
  // every chunk unpinned again.
  LoadedBytes acquire(std::span<const uint32_t> chunks);
  void release(std::span<const uint32_t> chunks);
  // Hints the I/O thread to load chunks; dropped when the queue is full or
  // the pool has no room but what pinned or freshly prefetched chunks hold.
  void prefetch(std::span<const uint32_t> chunks);

  // Row `row` of sliced weight w, encoded: copied from its slice when that is
  // resident, read from the file otherwise. Valid until the next call.
  const uint8_t* row(ir::TensorId w, int64_t row);

  ResidencyCounters counters() const;

  // The pool gives up to `bytes` (never below plan().min_pool_bytes),
  // evicting unpinned chunks, after waiting for loads in flight; returns
  // the bytes it gave.
  uint64_t shrink(uint64_t bytes) override;
  void grow(uint64_t bytes) override;

 private:
  enum class State : uint8_t { Unloaded, Queued, Loading, Resident };

  uint8_t* mirror_of(const Chunk& chunk) const { return mirrors_[chunk.file]; }
  // With the lock: loads c (the caller has set it Loading), unlocking to read.
  void load_locked(std::unique_lock<std::mutex>& lock, uint32_t c);
  void acquire_one(std::unique_lock<std::mutex>& lock, uint32_t c, LoadedBytes& loaded);
  // Evicts until `bytes` more fit in the pool; false when that cannot be done.
  bool make_room(uint64_t bytes, bool spare_fresh);
  void evict(uint32_t c);
  void io_loop();

  ResidencyPlan plan_;
  std::vector<std::unique_ptr<ChunkFile>> files_;
  std::vector<uint8_t*> mirrors_;
  std::vector<uint64_t> mirror_bytes_;
  std::unique_ptr<EvictionPolicy> policy_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a load finished, a pin dropped, or the queue grew
  std::vector<State> state_;
  std::vector<uint32_t> pins_;
  std::vector<uint8_t> fresh_;       // prefetched, not yet used
  std::vector<uint64_t> unreported_; // loaded bytes not yet returned by acquire
  std::vector<uint8_t> evictable_;   // resident, unpinned, paged
  std::vector<uint8_t> spare_mask_;  // evictable_ without fresh chunks
  uint64_t pool_used_ = 0;           // paged chunks resident or loading
  uint64_t pool_capacity_ = 0;       // what they may take
  std::vector<uint32_t> queue_;      // ring of chunks for the I/O thread
  size_t queue_head_ = 0, queue_size_ = 0;
  int loading_ = 0;
  bool stop_ = false;
  ResidencyCounters counters_;
  std::vector<uint8_t> staging_;  // one table row
  std::thread io_;
};

// Holds chunks acquired for as long as it lives.
class ChunkPins {
 public:
  ChunkPins(WeightResidency& residency, std::span<const uint32_t> chunks)
      : residency_(residency), chunks_(chunks), loaded_(residency.acquire(chunks)) {}
  ~ChunkPins() { residency_.release(chunks_); }
  ChunkPins(const ChunkPins&) = delete;
  ChunkPins& operator=(const ChunkPins&) = delete;
  const LoadedBytes& loaded() const { return loaded_; }

 private:
  WeightResidency& residency_;
  std::span<const uint32_t> chunks_;
  LoadedBytes loaded_;
};

}  // namespace synapse::memory
