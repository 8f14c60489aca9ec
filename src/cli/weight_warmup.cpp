#include "cli/weight_warmup.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "progress/progress.h"

namespace synapse::cli {

namespace {
constexpr uint64_t kWorthShowing = 256ull << 20;
constexpr uint64_t kStep = 16ull << 20;  // bytes asked ahead and touched per report

// Faults weight bytes in (read) and shows how many are done (count).
class Reader {
 public:
  explicit Reader(uint64_t total) : progress_("loading weights", total) {}

  void read(std::span<const uint8_t> bytes, uint64_t at, uint64_t n) {
    // Advice only (on whole pages): the reads below fault the pages in either way.
    const auto first = reinterpret_cast<uintptr_t>(bytes.data() + at) & ~(page_ - 1);
    ::madvise(reinterpret_cast<void*>(first), reinterpret_cast<uintptr_t>(bytes.data() + at + n) - first,
              MADV_WILLNEED);
    // One read per page faults it in (a volatile read is never left out).
    const volatile uint8_t* step = bytes.data() + at;
    for (uint64_t i = 0; i < n; i += page_) static_cast<void>(step[i]);
  }

  void count(uint64_t n) {
    done_ += n;
    progress_.update(done_);
  }

  // Bytes [from, end) read and counted a step at a time.
  void read_all(std::span<const uint8_t> bytes, uint64_t from) {
    for (uint64_t at = from; at < bytes.size(); at += kStep) {
      const uint64_t n = std::min<uint64_t>(kStep, bytes.size() - at);
      read(bytes, at, n);
      count(n);
    }
  }

 private:
  Progress progress_;
  uint64_t done_ = 0;
  const uint64_t page_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
};

// Whether the first n bytes of `file`, read in, come in 2 MiB pages at
// least half (what readahead made them) by the growth of the mapping's
// huge-page bytes.
bool read_mostly_huge(const MappedFile& file, uint64_t n, Reader& reader) {
  const uint64_t before = file.bytes_in_huge_pages();
  reader.read(file.bytes(), 0, n);
  const uint64_t after = file.bytes_in_huge_pages();
  return after > before && after - before >= n / 2;
}

// Decode streams every weight and reads 2 MiB pages faster (MappedFile::
// set_readahead; 1-thread Qwen2.5-0.5B-shaped Q8_0 decode on an Intel Xeon
// read 93-95% of membw with 96-97% of the file in 2 MiB pages, 87% with
// 56%; llama.cpp, mapping the same page cache, gains too). A file written
// or copied shortly before sits in the page cache in 4 KiB folios, which
// faults map page by page whatever the advice; read once more from the
// file, it comes in 2 MiB folios where the kernel and file system make
// them. So the first step of each file is a probe: when less than half
// of it comes in huge pages, it is dropped from the cache and read again,
// and when that brings it in huge pages, so is the rest of the file: a
// cold read of the file, once (the next load finds the cache in 2 MiB
// folios).
void warm_up_file(const MappedFile& file, Reader& reader) {
  const std::span<const uint8_t> bytes = file.bytes();
  if (bytes.size() < kStep) return reader.read_all(bytes, 0);
  // The rest goes in one drop: dropped step by step ahead of the reads,
  // only half the file came back in huge pages (readahead runs past a step
  // into bytes the next drop then takes away).
  if (!read_mostly_huge(file, kStep, reader) && file.drop_from_page_cache(0, kStep) &&
      read_mostly_huge(file, kStep, reader))
    file.drop_from_page_cache(kStep, bytes.size() - kStep);
  reader.count(kStep);
  reader.read_all(bytes, kStep);
}

// The bytes to read: whole files, or, when layers are dropped, the weights
// the session reads (a dropped layer's are never touched).
std::vector<std::span<const uint8_t>> weight_ranges(const Model& model, const std::vector<bool>& unused) {
  std::vector<std::span<const uint8_t>> ranges;
  if (unused.empty()) {
    for (const auto& file : model.files) ranges.push_back(file->bytes());
    return ranges;
  }
  for (uint32_t w = 0; w < model.graph.weights.size(); ++w)
    if (!unused[w]) ranges.push_back(model.weight_bytes(ir::TensorId{w}));
  return ranges;
}

}  // namespace

void warm_up_weights(const Model& model, const exec::Session& session) {
  if (session.residency()) return;
  const std::vector<bool>& unused = session.scheduler().layer_drop().weights;
  const std::vector<std::span<const uint8_t>> ranges = weight_ranges(model, unused);
  uint64_t total = 0;
  for (const auto& bytes : ranges) total += bytes.size();
  if (total < kWorthShowing) return;
  Reader reader(total);
  if (unused.empty()) {
    for (const auto& file : model.files) warm_up_file(*file, reader);
    return;
  }
  for (const std::span<const uint8_t> bytes : ranges) reader.read_all(bytes, 0);
}

}  // namespace synapse::cli
