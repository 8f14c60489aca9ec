// Reads byte ranges of a weight file into a mirror of the file: an address
// range where file offset o lives at base + o. Uses O_DIRECT where the file
// system allows it (the page cache then keeps no second copy of paged
// weights), reading whole aligned blocks; plain pread otherwise. Retries
// EINTR and short reads. Safe to use from several threads at once.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace synapse::memory {

class ChunkFile {
 public:
  static constexpr uint64_t kAlign = 4096;  // O_DIRECT block and buffer alignment

  // Throws Error(Io) naming the path when the file cannot be opened.
  ChunkFile(const std::string& path, bool direct);
  virtual ~ChunkFile();
  ChunkFile(const ChunkFile&) = delete;
  ChunkFile& operator=(const ChunkFile&) = delete;

  // Fills mirror[offset, offset + length) from the file and writes no other
  // mirror byte: a neighbouring chunk may share its first and last blocks.
  // mirror must be kAlign-aligned and span the file rounded up to kAlign.
  // Throws Error(Io) on a read error, Error(Truncated) when the file ends
  // early.
  void read(uint8_t* mirror, uint64_t offset, uint64_t length);
  // Reads [offset, offset + length) to dst through the page cache (small
  // reads: one row of a table).
  void read_to(uint8_t* dst, uint64_t offset, uint64_t length);

  bool direct() const { return direct_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 protected:
  // One pread(2) call; tests override it to inject EINTR, short reads and
  // errors.
  virtual ssize_t pread_once(void* dst, size_t length, uint64_t offset, bool direct);

 private:
  // Reads file bytes [begin, end) to dst; false when O_DIRECT refused it.
  bool read_range(uint8_t* dst, uint64_t begin, uint64_t end, bool direct);
  // Reads file bytes [begin, end) to mirror + begin with O_DIRECT: whole
  // blocks straight in, the blocks at the ends through a bounce block.
  // False when O_DIRECT refused it.
  bool read_direct(uint8_t* mirror, uint64_t begin, uint64_t end);

  std::string path_;
  int fd_ = -1;
  int direct_fd_ = -1;
  std::atomic<bool> direct_{false};  // cleared for good when the file system refuses O_DIRECT
  uint64_t size_ = 0;
};

}  // namespace synapse::memory
