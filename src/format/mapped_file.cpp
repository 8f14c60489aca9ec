#include "format/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

#include "synapse/error.h"

namespace synapse {

static Error io_error(const std::string& what, const std::string& path) {
  return Error(ErrorKind::Io, what + ": " + std::strerror(errno), Error::kNoOffset, path);
}

static int open_or_throw(const std::string& path) {
  // Not blocking: opening a FIFO with no writer would wait for one; fstat
  // then refuses what is not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw io_error("cannot open file", path);
  return fd;
}

MappedFile::MappedFile(const std::string& path) : MappedFile(open_or_throw(path), path) { on_disk_ = true; }

MappedFile::MappedFile(int fd, std::string path) : path_(std::move(path)) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    Error e = io_error("cannot stat file", path_);
    ::close(fd);
    throw e;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Io, "not a regular file", Error::kNoOffset, path_);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      Error e = io_error("cannot map file", path_);
      ::close(fd);
      throw e;
    }
    data_ = static_cast<const uint8_t*>(p);
    set_readahead(true);
  }
  fd_ = fd;
}

std::shared_ptr<MappedFile> MappedFile::in_memory(const std::string& name, uint64_t size,
                                                  const std::function<void(std::span<uint8_t>)>& fill) {
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) throw io_error("cannot create a memory file", name);
  if (size > 0) {
    void* p = ::ftruncate(fd, static_cast<off_t>(size)) == 0
                  ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
    if (p == MAP_FAILED) {
      Error e = io_error("cannot size a memory file", name);
      ::close(fd);
      throw e;
    }
    try {
      fill({static_cast<uint8_t*>(p), size});
    } catch (...) {
      ::munmap(p, size);
      ::close(fd);
      throw;
    }
    ::munmap(p, size);
  }
  std::shared_ptr<MappedFile> file(new MappedFile(fd, name));
  ::close(file->fd_);  // the mapping keeps the memory file; nothing is read from it again
  file->fd_ = -1;
  return file;
}

void MappedFile::set_readahead(bool on) const {
  // Advice only: a kernel that refuses it reads more or maps smaller pages,
  // nothing breaks. MADV_HUGEPAGE lets a fault read ahead into 2 MiB page
  // cache folios that are then mapped whole: one TLB entry, not 512, for a
  // decode step that streams every weight (1-thread Qwen2.5-0.5B Q8_0
  // decode on a Zen 5 EPYC: 58 tok/s with the file in 2 MiB folios, 55-56
  // in 4 KiB pages). Off with readahead: a fault would then read 2 MiB.
  if (!data_) return;
  readahead_ = on;
  advise(0, size_);
}

void MappedFile::advise(uint64_t offset, uint64_t length) const {
  void* p = const_cast<uint8_t*>(data_) + offset;
  ::madvise(p, length, readahead_ ? MADV_NORMAL : MADV_RANDOM);
  ::madvise(p, length, readahead_ ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

namespace {

// Walks a /proc/PID/smaps text: for every mapping that `select(from, to,
// name)` takes, adds its bytes to mapped and its FilePmdMapped bytes to
// in_huge_pages. `name` is what follows the inode on the header line: the
// file's path, or nothing.
template <class Select>
FileMappingPages sum_mappings(std::istream& smaps, Select select) {
  FileMappingPages pages;
  bool inside = false;  // the lines that follow belong to a selected mapping
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t from = 0, to = 0;
    int name_at = 0;
    // "from-to perms offset dev inode" then the path, after spaces.
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &from, &to, &name_at) == 2 &&
        name_at > 0) {
      inside = select(from, to, std::string_view(line).substr(static_cast<size_t>(name_at)));
      if (inside) pages.mapped += to - from;
    } else if (unsigned long long kib = 0; inside && std::sscanf(line.c_str(), "FilePmdMapped: %llu kB", &kib) == 1) {
      pages.in_huge_pages += kib * 1024;
    }
  }
  return pages;
}

}  // namespace

uint64_t smaps_huge_page_bytes(std::istream& smaps, uintptr_t begin, uintptr_t end) {
  return sum_mappings(smaps, [&](uintptr_t from, uintptr_t to, std::string_view) { return from < end && to > begin; })
      .in_huge_pages;
}

FileMappingPages smaps_file_mapping_pages(std::istream& smaps, const std::string& path) {
  return sum_mappings(smaps, [&](uintptr_t, uintptr_t, std::string_view name) { return name == path; });
}

uint64_t MappedFile::bytes_in_huge_pages() const {
  std::ifstream smaps("/proc/self/smaps");
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  return smaps_huge_page_bytes(smaps, begin, begin + size_);
}

bool MappedFile::drop_from_page_cache(uint64_t offset, uint64_t length) const {
  if (!on_disk_ || !data_ || offset >= size_) return false;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t first = offset & ~(page - 1);
  const uint64_t span = std::min(length, size_ - offset) + (offset - first);
  // MAP_FIXED replaces the old pages in one step: no other mapping can
  // take the range in between.
  void* at = const_cast<uint8_t*>(data_) + first;
  if (::mmap(at, span, PROT_READ, MAP_SHARED | MAP_FIXED, fd_, static_cast<off_t>(first)) == MAP_FAILED)
    throw io_error("cannot map part of the file again", path_);
  advise(first, span);
  ::fdatasync(fd_);  // the cache keeps pages not yet written back
  return ::posix_fadvise(fd_, static_cast<off_t>(first), static_cast<off_t>(span), POSIX_FADV_DONTNEED) == 0;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace synapse
