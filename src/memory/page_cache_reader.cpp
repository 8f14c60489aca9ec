#include "memory/page_cache_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace synapse::memory {

namespace {
constexpr uint64_t kStep = 16ull << 20;  // bytes populated and touched between counts
}  // namespace

PageCacheReader::PageCacheReader(std::function<void(uint64_t)> on_read)
    : on_read_(std::move(on_read)), page_(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))) {}

void PageCacheReader::read_from(std::span<const uint8_t> bytes, uint64_t from, const MappedFile* mend) {
  for (uint64_t at = from; at < bytes.size(); at += kStep) {
    const uint64_t n = std::min<uint64_t>(kStep, bytes.size() - at);
    read_step(bytes, at, n);
    if (mend && !reread_small_windows(*mend, at, n)) mend = nullptr;
    count(n);
  }
}

// Each step is faulted in by the kernel (MADV_POPULATE_READ, Linux 5.14),
// not advised to be read ahead (MADV_WILLNEED): that readahead fills holes
// in the page cache (pages evicted under memory pressure) with small
// folios, where faults bring 2 MiB ones (MappedFile advises its mapping
// for huge pages). Measured on an AMD EPYC guest (Zen 4): Qwen2.5-0.5B-
// and Llama-3.2-1B-shaped files with 30% of their 2 MiB ranges evicted at
// random came back 85-94% in 2 MiB pages advised, 96-99% populated, and
// 1-thread decode moved -2.5% to +7% (median +2.5%, nine pairs); a cold
// 7.4 GB file loaded in 3.2-4.7 s populated against 2.7-7.5 s advised
// (eight runs each, interleaved).
void PageCacheReader::read_step(std::span<const uint8_t> bytes, uint64_t at, uint64_t n) {
  // On whole pages; it succeeds only with every page mapped.
  void* first = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(bytes.data() + at) & ~(page_ - 1));
  const auto length = static_cast<uint64_t>(bytes.data() + at + n - static_cast<const uint8_t*>(first));
  if (::madvise(first, length, MADV_POPULATE_READ) == 0) return;
  // A kernel older than 5.14 refuses it: there the advice to read ahead
  // keeps the disk busy while one read per page (a volatile read is never
  // left out) faults the step in, its last page too.
  ::madvise(first, length, MADV_WILLNEED);
  const volatile uint8_t* step = bytes.data() + at;
  for (uint64_t i = 0; i < n; i += page_) static_cast<void>(step[i]);
  static_cast<void>(step[n - 1]);
}

// Whether the first n bytes of `file`, read in, come in 2 MiB pages at
// least half (what readahead made them) by the growth of the mapping's
// huge-page bytes.
bool PageCacheReader::read_mostly_huge(const MappedFile& file, uint64_t n) {
  const uint64_t before = file.bytes_in_huge_pages();
  read_step(file.bytes(), 0, n);
  const uint64_t after = file.bytes_in_huge_pages();
  return after > before && after - before >= n / 2;
}

// Parts of a file that another program read (read(2), or a mapping not
// advised for huge pages) after they were evicted sit in the page cache in
// small folios, which faults map page by page. So the 2 MiB windows of a
// step that the page tables show mapped in small pages are dropped from
// the cache (and mapped anew: see MappedFile::drop_from_page_cache) and
// read again, once. What
// another process still maps stays in the cache and comes back small; when
// no window of a step comes back whole (or no 2 MiB page can be had), the
// rest of the file is read as it is. Measured on an AMD EPYC guest
// (Zen 4), files of which 30% of the 2 MiB ranges were evicted and read
// back by read(2), twice (synapse bench -p 0 -n 64 -t 1, 4 interleaved
// pairs): Qwen2.5-0.5B-shaped Q8_0 mapped 46-51% in 2 MiB pages before,
// 99.8% now, and decoded 1.10-1.21x as fast (median 1.13x); Llama-3.2-1B-
// shaped Q4_K_M 46-51% and 99.9%, 0.94-1.19x (median 1.09x); loads took as
// long (3.6-4.2 s, 5.1-6.5 s).
bool PageCacheReader::reread_small_windows(const MappedFile& file, uint64_t at, uint64_t n) {
  const std::span<const uint8_t> bytes = file.bytes();
  const std::span<const uint8_t> step = bytes.subspan(at, n);
  uint64_t small = 0;
  for (const std::span<const uint8_t> window : scan_.small_windows(step)) {
    const auto offset = static_cast<uint64_t>(window.data() - bytes.data());
    if (!file.drop_from_page_cache(offset, window.size())) return false;
    read_step(bytes, offset, window.size());
    small += window.size();
  }
  if (small == 0) return true;
  uint64_t still_small = 0;
  for (const std::span<const uint8_t> window : scan_.small_windows(step)) still_small += window.size();
  return still_small < small;
}

// 1-thread Qwen2.5-0.5B-shaped Q8_0 decode on an Intel Xeon read 93-95% of
// membw with 96-97% of the file in 2 MiB pages, 87% with 56% (llama.cpp,
// mapping the same page cache, gains too). A file written or copied
// shortly before sits in the page cache in 4 KiB folios, which faults map
// page by page whatever the advice; read once more from the file, it comes
// in 2 MiB folios where the kernel and file system make them. So the first
// step of each file is a probe: when less than half of it comes in huge
// pages, it is dropped from the cache and read again, and when that brings
// it in huge pages, so is the rest of the file: a cold read of the file,
// once (the next load finds the cache in 2 MiB folios). Where the probe
// finds huge pages, later steps' windows mapped small are read afresh.
void PageCacheReader::read_file(const MappedFile& file) {
  const std::span<const uint8_t> bytes = file.bytes();
  if (bytes.size() < kStep) return read_from(bytes, 0);
  bool huge = read_mostly_huge(file, kStep);
  // The rest goes in one drop: dropped step by step ahead of the reads,
  // only half the file came back in huge pages (readahead runs past a step
  // into bytes the next drop then takes away).
  if (!huge && file.drop_from_page_cache(0, kStep) && (huge = read_mostly_huge(file, kStep)))
    file.drop_from_page_cache(kStep, bytes.size() - kStep);
  if (huge) reread_small_windows(file, 0, kStep);
  count(kStep);
  read_from(bytes, kStep, huge ? &file : nullptr);
}

}  // namespace synapse::memory
