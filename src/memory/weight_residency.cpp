#include "memory/weight_residency.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "memory/huge_page_scan.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// Which chunks a step reads every time: all but the routed experts'.
std::vector<uint8_t> every_step_chunks(const std::vector<Chunk>& chunks) {
  std::vector<uint8_t> every_step(chunks.size());
  for (size_t c = 0; c < chunks.size(); ++c) every_step[c] = !chunks[c].expert;
  return every_step;
}

// Each advised range may split a mirror's mapping in three; this bounds
// the mappings added (the kernel allows about 65,000 per process, and KV
// pages take theirs).
constexpr size_t kMaxHugeRanges = 2048;

// Advises the mirrors into 2 MiB pages, but only windows wholly inside one
// chunk, the largest chunks first: such a page holds that chunk's bytes
// alone, is filled by its load and freed whole by its eviction, so resident
// memory stays what the ledger counts. A window a chunk shares with a
// neighbour stays in small pages (a 2 MiB page there would hold the
// neighbour's bytes unloaded, uncounted). Fewer, larger pages matter twice:
// each load faults a chunk in anew, and 4 KiB faults cost more than the
// read (Qwen2.5-0.5B-shaped Q8_0 under --mem-budget 40%: 4.4 tok/s against
// 6.2 advised, through the page cache; 2.1 against 2.5-3.2 with O_DIRECT);
// and decode reads resident weights faster without TLB misses.
void advise_huge_windows(const std::vector<Chunk>& chunks, const std::vector<uint8_t*>& mirrors) {
  std::vector<std::span<const uint8_t>> ranges;
  for (const Chunk& chunk : chunks) {
    if (chunk.rows_only) continue;  // read a row at a time, never loaded whole
    const std::span<const uint8_t> whole = whole_windows({mirrors[chunk.file] + chunk.offset, chunk.bytes});
    if (!whole.empty()) ranges.push_back(whole);
  }
  const size_t count = std::min(ranges.size(), kMaxHugeRanges);
  std::partial_sort(ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(count), ranges.end(),
                    [](const auto& a, const auto& b) { return a.size() > b.size(); });
  // Advice only: where the kernel has no transparent huge pages, or no
  // more mappings, the windows stay in small pages.
  for (size_t i = 0; i < count; ++i)
    ::madvise(const_cast<uint8_t*>(ranges[i].data()), ranges[i].size(), MADV_HUGEPAGE);
}

}  // namespace

WeightResidency::WeightResidency(std::vector<std::string> files, ResidencyPlan plan, const ResidencyOptions& options)
    : plan_(std::move(plan)),
      policy_(make_pool_policy(options.policy, every_step_chunks(plan_.chunks))),
      state_(plan_.chunks.size(), State::Unloaded),
      pins_(plan_.chunks.size(), 0),
      fresh_(plan_.chunks.size(), 0),
      unreported_(plan_.chunks.size(), 0),
      evictable_(plan_.chunks.size(), 0),
      spare_mask_(plan_.chunks.size(), 0),
      pool_capacity_(plan_.pool_bytes),
      queue_(static_cast<size_t>(std::max(1, options.prefetch_queue))) {
  uint64_t widest_row = 0;
  for (const WeightChunks& wc : plan_.weights) widest_row = std::max(widest_row, wc.row_stride);
  staging_.resize(widest_row);
  for (const std::string& path : files) {
    files_.push_back(options.open_file ? options.open_file(path, options.direct_io)
                                       : std::make_unique<ChunkFile>(path, options.direct_io));
    const uint64_t bytes = round_up(std::max<uint64_t>(files_.back()->size(), 1), ChunkFile::kAlign);
    // Reserved, not committed: only loaded chunks take memory.
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
      for (size_t i = 0; i < mirrors_.size(); ++i) ::munmap(mirrors_[i], mirror_bytes_[i]);
      throw Error(ErrorKind::Io, std::string("cannot reserve address space for paged weights: ") + std::strerror(errno),
                  Error::kNoOffset, path);
    }
    mirrors_.push_back(static_cast<uint8_t*>(base));
    mirror_bytes_.push_back(bytes);
  }
  advise_huge_windows(plan_.chunks, mirrors_);
  uint64_t pinned_bytes = 0;
  for (const Chunk& chunk : plan_.chunks)
    if (chunk.pinned) pinned_bytes += chunk.bytes;
  try {
    for (uint32_t c = 0; c < plan_.chunks.size(); ++c) {
      const Chunk& chunk = plan_.chunks[c];
      if (!chunk.pinned) continue;
      files_[chunk.file]->read(mirror_of(chunk), chunk.offset, chunk.bytes);
      state_[c] = State::Resident;
      counters_.bytes_loaded += chunk.bytes;
      counters_.resident_bytes += chunk.bytes;
      if (options.on_pinned_load) options.on_pinned_load(counters_.bytes_loaded, pinned_bytes);
    }
  } catch (...) {
    for (size_t i = 0; i < mirrors_.size(); ++i) ::munmap(mirrors_[i], mirror_bytes_[i]);
    throw;
  }
  counters_.peak_resident_bytes = counters_.resident_bytes;
  io_ = std::thread([this] { io_loop(); });
}

WeightResidency::~WeightResidency() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  io_.join();
  for (size_t i = 0; i < mirrors_.size(); ++i) ::munmap(mirrors_[i], mirror_bytes_[i]);
}

const uint8_t* WeightResidency::data(ir::TensorId w) const {
  const WeightChunks& wc = plan_.weights.at(w.index);
  if (wc.count == 0) return nullptr;
  const Chunk& first = plan_.chunks[wc.first];
  return mirror_of(first) + first.offset;
}

void WeightResidency::evict(uint32_t c) {
  const Chunk& chunk = plan_.chunks[c];
  // Only pages wholly inside the chunk are dropped: a page it shares with a
  // neighbour may hold that neighbour's live bytes.
  const uint64_t begin = round_up(chunk.offset, ChunkFile::kAlign);
  const uint64_t end = (chunk.offset + chunk.bytes) / ChunkFile::kAlign * ChunkFile::kAlign;
  if (end > begin) ::madvise(mirror_of(chunk) + begin, end - begin, MADV_DONTNEED);
  fresh_[c] = 0;
  state_[c] = State::Unloaded;
  evictable_[c] = 0;
  unreported_[c] = 0;
  pool_used_ -= chunk.bytes;
  counters_.resident_bytes -= chunk.bytes;
  policy_->on_evict(c);
}

bool WeightResidency::make_room(uint64_t bytes, bool spare_fresh) {
  while (pool_used_ + bytes > pool_capacity_) {
    std::span<const uint8_t> candidates = evictable_;
    if (spare_fresh) {
      for (size_t c = 0; c < evictable_.size(); ++c) spare_mask_[c] = evictable_[c] && !fresh_[c];
      candidates = spare_mask_;
    }
    const uint32_t victim = policy_->victim(candidates);
    if (victim == EvictionPolicy::kNone) return false;
    evict(victim);
    ++counters_.evictions;
  }
  return true;
}

uint64_t WeightResidency::shrink(uint64_t bytes) {
  std::unique_lock lock(mutex_);
  const uint64_t floor = std::min(pool_capacity_, plan_.min_pool_bytes);
  const uint64_t target = pool_capacity_ - std::min(bytes, pool_capacity_ - floor);
  const uint64_t old_capacity = pool_capacity_;
  pool_capacity_ = target;  // the I/O thread loads nothing past it meanwhile
  // A chunk loading becomes evictable once loaded (pins are held by the
  // computing thread, this one): wait for those rather than give less.
  while (!make_room(0, false) && loading_ > 0) changed_.wait(lock);
  pool_capacity_ = std::max(target, pool_used_);
  return old_capacity - pool_capacity_;
}

void WeightResidency::grow(uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    pool_capacity_ += bytes;
  }
  changed_.notify_all();
}

void WeightResidency::load_locked(std::unique_lock<std::mutex>& lock, uint32_t c) {
  const Chunk& chunk = plan_.chunks[c];
  ++loading_;
  lock.unlock();
  try {
    files_[chunk.file]->read(mirror_of(chunk), chunk.offset, chunk.bytes);
  } catch (...) {
    lock.lock();
    --loading_;
    state_[c] = State::Unloaded;
    pool_used_ -= chunk.bytes;
    counters_.resident_bytes -= chunk.bytes;
    changed_.notify_all();
    throw;
  }
  lock.lock();
  --loading_;
  state_[c] = State::Resident;
  unreported_[c] += chunk.bytes;
  counters_.bytes_loaded += chunk.bytes;
  ++counters_.loads;
  policy_->on_load(c);
  changed_.notify_all();
}

void WeightResidency::acquire_one(std::unique_lock<std::mutex>& lock, uint32_t c, LoadedBytes& loaded) {
  bool missed = false;
  for (;;) {
    switch (state_[c]) {
      case State::Resident:
        if (pins_[c]++ == 0) evictable_[c] = 0;
        if (fresh_[c]) {
          fresh_[c] = 0;
          ++counters_.prefetch_used;
          loaded.prefetched += unreported_[c];
        }
        ++(missed ? counters_.misses : counters_.hits);
        policy_->on_use(c);
        loaded.loaded += unreported_[c];
        unreported_[c] = 0;
        return;
      case State::Loading:  // by the I/O thread: wait for it
        missed = true;
        changed_.wait(lock);
        break;
      case State::Unloaded:
      case State::Queued: {
        missed = true;
        const uint64_t bytes = plan_.chunks[c].bytes;
        if (!make_room(bytes, false)) {
          // Pins are held by the one thread that computes, this one: only a
          // prefetch in flight can still free room (once loaded, it is evictable).
          if (loading_ == 0)
            throw Error(ErrorKind::InsufficientMemory, "the weight pool cannot hold the chunks a region needs at once",
                        Error::kNoOffset, "weights");
          changed_.wait(lock);
          break;
        }
        state_[c] = State::Loading;  // a queued entry is skipped by the I/O thread
        pool_used_ += bytes;
        counters_.resident_bytes += bytes;
        counters_.peak_resident_bytes = std::max(counters_.peak_resident_bytes, counters_.resident_bytes);
        load_locked(lock, c);
        break;
      }
    }
  }
}

LoadedBytes WeightResidency::acquire(std::span<const uint32_t> chunks) {
  LoadedBytes loaded;
  std::unique_lock lock(mutex_);
  size_t done = 0;
  try {
    for (; done < chunks.size(); ++done) {
      const uint32_t c = chunks[done];
      if (plan_.chunks[c].pinned) continue;
      acquire_one(lock, c, loaded);
    }
  } catch (...) {
    lock.unlock();
    release(chunks.first(done));
    throw;
  }
  return loaded;
}

void WeightResidency::release(std::span<const uint32_t> chunks) {
  {
    std::lock_guard lock(mutex_);
    for (uint32_t c : chunks) {
      if (plan_.chunks[c].pinned) continue;
      if (--pins_[c] == 0) evictable_[c] = 1;
    }
  }
  changed_.notify_all();
}

void WeightResidency::prefetch(std::span<const uint32_t> chunks) {
  bool queued = false;
  {
    std::lock_guard lock(mutex_);
    for (uint32_t c : chunks) {
      if (plan_.chunks[c].pinned || state_[c] != State::Unloaded || queue_size_ == queue_.size()) continue;
      state_[c] = State::Queued;
      queue_[(queue_head_ + queue_size_++) % queue_.size()] = c;
      queued = true;
    }
  }
  if (queued) changed_.notify_all();
}

void WeightResidency::io_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || queue_size_ > 0; });
    if (stop_) return;
    const uint32_t c = queue_[queue_head_];
    queue_head_ = (queue_head_ + 1) % queue_.size();
    --queue_size_;
    if (state_[c] != State::Queued) continue;  // taken over by a demand load
    const uint64_t bytes = plan_.chunks[c].bytes;
    if (!make_room(bytes, true)) {
      state_[c] = State::Unloaded;  // no room but what is in use or about to be: drop the hint
      continue;
    }
    state_[c] = State::Loading;
    pool_used_ += bytes;
    counters_.resident_bytes += bytes;
    counters_.peak_resident_bytes = std::max(counters_.peak_resident_bytes, counters_.resident_bytes);
    try {
      load_locked(lock, c);
    } catch (const std::exception&) {
      continue;  // a demand load retries it and reports the error
    }
    fresh_[c] = 1;
    evictable_[c] = pins_[c] == 0;
    ++counters_.prefetched;
  }
}

const uint8_t* WeightResidency::row(ir::TensorId w, int64_t row) {
  const WeightChunks& wc = plan_.weights.at(w.index);
  const Chunk& first = plan_.chunks[wc.first];
  const uint64_t stride = wc.row_stride;
  const uint32_t c = wc.first + static_cast<uint32_t>(row / wc.slice_rows);
  const uint64_t offset = first.offset + static_cast<uint64_t>(row) * stride;
  std::unique_lock lock(mutex_);
  if (state_[c] == State::Resident) {
    std::memcpy(staging_.data(), mirror_of(first) + offset, stride);
    return staging_.data();
  }
  lock.unlock();
  files_[first.file]->read_to(staging_.data(), offset, stride);
  lock.lock();
  counters_.bytes_loaded += stride;
  return staging_.data();
}

ResidencyCounters WeightResidency::counters() const {
  std::lock_guard lock(mutex_);
  ResidencyCounters counters = counters_;
  counters.pool_bytes = pool_capacity_;
  return counters;
}

}  // namespace synapse::memory
