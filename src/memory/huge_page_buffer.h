// Anonymous memory advised into 2 MiB pages, where transparent huge pages
// are "madvise" or "always": the page size the engine's mapped weights get
// from the page cache (MappedFile). A benchmark that reads memory as decode
// does must read it in the same pages: in 4 KiB pages a Zen 4 core read
// 21-26 GB/s where it read 27-32 in 2 MiB pages, the TLB misses costing the
// difference.
#pragma once

#include <cstdint>
#include <string>

namespace synapse::memory {

// The bracketed choice in /sys/kernel/mm/transparent_hugepage/enabled
// ("always [madvise] never" -> "madvise"), or "unknown".
std::string transparent_huge_page_mode();

class HugePageBuffer {
 public:
  HugePageBuffer() = default;  // empty: maps nothing
  // At least `bytes` (a whole number of 2 MiB windows), zero, not yet
  // touched. Throws Error(InsufficientMemory) when it cannot be mapped.
  explicit HugePageBuffer(uint64_t bytes);
  ~HugePageBuffer();
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

  // Once the buffer is written whole: the share of it mapped in 2 MiB
  // pages, or -1 where the kernel cannot say (HugePageScan).
  double huge_share() const;

 private:
  void release();

  void* mapping_ = nullptr;
  uint64_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace synapse::memory
