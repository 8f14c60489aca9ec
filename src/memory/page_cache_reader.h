// Reads mapped weight bytes into memory ahead of their first use, a step at
// a time, saying after each how many bytes it read (for a progress report).
// Decode streams every weight and reads 2 MiB pages faster, so a whole file
// is read in such that its pages come in 2 MiB page-cache folios where the
// kernel and file system make them, also where another program read parts
// of it into small ones.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "format/mapped_file.h"
#include "memory/huge_page_scan.h"

namespace synapse::memory {

class PageCacheReader {
 public:
  // on_read(n): n more bytes were read.
  explicit PageCacheReader(std::function<void(uint64_t)> on_read = {});

  // A whole file, also one the cache held in 4 KiB folios or in part.
  void read_file(const MappedFile& file);
  // Bytes of a mapping, as the cache holds them.
  void read(std::span<const uint8_t> bytes) { read_from(bytes, 0); }

 private:
  // mend: the file of `bytes`, whose windows mapped small are read afresh.
  void read_from(std::span<const uint8_t> bytes, uint64_t from, const MappedFile* mend = nullptr);
  void read_step(std::span<const uint8_t> bytes, uint64_t at, uint64_t n);
  // False when none of the windows it read again came back in 2 MiB pages.
  bool reread_small_windows(const MappedFile& file, uint64_t at, uint64_t n);
  bool read_mostly_huge(const MappedFile& file, uint64_t n);
  void count(uint64_t n) {
    if (on_read_) on_read_(n);
  }

  std::function<void(uint64_t)> on_read_;
  const uint64_t page_;
  HugePageScan scan_;
};

}  // namespace synapse::memory
