#include "format/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "synapse/error.h"

namespace synapse {

static Error io_error(const std::string& what, const std::string& path) {
  return Error(ErrorKind::Io, what + ": " + std::strerror(errno), Error::kNoOffset, path);
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error("cannot open file", path);
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    Error e = io_error("cannot stat file", path);
    ::close(fd);
    throw e;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Io, "not a regular file", Error::kNoOffset, path);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      Error e = io_error("cannot map file", path);
      ::close(fd);
      throw e;
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

void MappedFile::set_readahead(bool on) const {
  // Advice only: a kernel that refuses it reads more, nothing breaks.
  if (data_) ::madvise(const_cast<uint8_t*>(data_), size_, on ? MADV_NORMAL : MADV_RANDOM);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace synapse
