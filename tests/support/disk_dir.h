// A folder for a test's files beside the test binary, removed at the end:
// unlike the system's temporary folder (often a tmpfs), a disk, so that the
// files' pages can be dropped from the page cache, for tests of what a
// mapping reads and how the kernel maps it. With helpers for such tests.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace synapse::test {

// A new folder beside the test binary.
inline TempDir disk_dir() { return TempDir(std::filesystem::read_symlink("/proc/self/exe").parent_path()); }

// Writes `bytes` bytes of `value` to `path` and waits until they are on
// the disk (written-back pages can be dropped); false on any failure.
inline bool write_to_disk(const std::string& path, size_t bytes, char value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const std::vector<char> data(bytes, value);
  const bool written =
      fd >= 0 && ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  return written;
}

// Asks the kernel to drop `path` (or `length` bytes of it from `offset`;
// 0: to its end) from the page cache; false when it could not be opened or
// advised.
inline bool drop_cached(const std::string& path, off_t offset = 0, off_t length = 0) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const bool advised = fd >= 0 && ::posix_fadvise(fd, offset, length, POSIX_FADV_DONTNEED) == 0;
  if (fd >= 0) ::close(fd);
  return advised;
}

// Pages of `path` in the page cache (mincore of a mapping of it); 0 when
// it cannot be mapped.
inline size_t cached_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const auto bytes = static_cast<size_t>(::lseek(fd, 0, SEEK_END));
  void* p = bytes > 0 ? ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (p == MAP_FAILED) return 0;
  std::vector<unsigned char> in_core((bytes + 4095) / 4096);
  ::mincore(p, bytes, in_core.data());
  ::munmap(p, bytes);
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

}  // namespace synapse::test
