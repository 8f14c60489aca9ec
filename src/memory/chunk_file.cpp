#include "memory/chunk_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "synapse/error.h"

namespace synapse::memory {

ChunkFile::ChunkFile(const std::string& path, bool direct) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ErrorKind::Io, std::string("cannot open file: ") + std::strerror(errno), Error::kNoOffset, path);
  struct stat st{};
  if (::fstat(fd_, &st) != 0) {
    ::close(fd_);
    throw Error(ErrorKind::Io, std::string("cannot stat file: ") + std::strerror(errno), Error::kNoOffset, path);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  // The buffered descriptor reads single table rows: readahead would only
  // fill the page cache (memory a budget does not have) with unused bytes.
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  if (direct) {
    direct_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    direct_ = direct_fd_ >= 0;
  }
}

ChunkFile::~ChunkFile() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  ::close(fd_);
}

ssize_t ChunkFile::pread_once(void* dst, size_t length, uint64_t offset, bool direct) {
  return ::pread(direct ? direct_fd_ : fd_, dst, length, static_cast<off_t>(offset));
}

bool ChunkFile::read_range(uint8_t* dst, uint64_t begin, uint64_t end, bool direct) {
  uint64_t at = begin;
  while (at < end) {
    // Bounded reads: a huge request is split rather than handed whole to the kernel.
    const size_t want = static_cast<size_t>(std::min<uint64_t>(end - at, uint64_t{1} << 30));
    const ssize_t got = pread_once(dst + (at - begin), want, at, direct);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (direct && errno == EINVAL) return false;
      throw Error(ErrorKind::Io, std::string("cannot read weights: ") + std::strerror(errno), at, path_);
    }
    if (got == 0) break;  // end of file
    at += static_cast<uint64_t>(got);
  }
  if (at < std::min(end, size_))
    throw Error(ErrorKind::Truncated, "the weight file ended while reading weights", at, path_);
  return true;
}

void ChunkFile::read(uint8_t* mirror, uint64_t offset, uint64_t length) {
  if (offset > size_ || length > size_ - offset)
    throw Error(ErrorKind::OutOfBounds, "weights lie past the end of the file", offset, path_);
  if (direct_.load(std::memory_order_relaxed)) {
    if (read_direct(mirror, offset, offset + length)) return;
    // This file system refuses O_DIRECT reads: read through the page cache
    // from now on (other threads reading this file may see it at once).
    direct_.store(false, std::memory_order_relaxed);
  }
  read_range(mirror + offset, offset, offset + length, false);
}

bool ChunkFile::read_direct(uint8_t* mirror, uint64_t begin, uint64_t end) {
  alignas(kAlign) uint8_t bounce[kAlign];
  for (uint64_t at = begin; at < end;) {
    const uint64_t block = at / kAlign * kAlign;
    if (at == block && end - at >= kAlign) {
      // Whole blocks of this range: straight into the mirror.
      const uint64_t whole = end / kAlign * kAlign;
      if (!read_range(mirror + at, at, whole, true)) return false;
      at = whole;
      continue;
    }
    // A block shared with a neighbour, whose bytes another thread may be
    // reading or loading: through the bounce block, copying ours only.
    const uint64_t stop = std::min(end, block + kAlign);
    if (!read_range(bounce, block, block + kAlign, true)) return false;  // up to the file's end
    std::memcpy(mirror + at, bounce + (at - block), stop - at);
    at = stop;
  }
  return true;
}

void ChunkFile::read_to(uint8_t* dst, uint64_t offset, uint64_t length) {
  if (offset > size_ || length > size_ - offset)
    throw Error(ErrorKind::OutOfBounds, "weights lie past the end of the file", offset, path_);
  read_range(dst, offset, offset + length, false);
}

}  // namespace synapse::memory
