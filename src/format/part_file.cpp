#include "format/part_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "synapse/error.h"

namespace synapse {
namespace {

Error io_error(const std::string& what, const std::string& path) {
  return Error(ErrorKind::Io, what + ": " + std::strerror(errno), Error::kNoOffset, path);
}

}  // namespace

std::string part_path_for(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) ? path : path + ".part";
}

PartFile::PartFile(std::string path) : path_(std::move(path)), part_(part_path_for(path_)) {
  fd_ = part_ == path_ ? ::open(part_.c_str(), O_WRONLY | O_CLOEXEC)
                       : ::open(part_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw io_error("cannot create file", part_);
}

PartFile::~PartFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (part_ != path_) ::unlink(part_.c_str());
}

void PartFile::append(const uint8_t* bytes, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd_, bytes, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw io_error("cannot write file", part_);
    bytes += k;
    n -= static_cast<size_t>(k);
  }
}

void PartFile::commit() {
  const bool in_place = part_ == path_;
  if (!in_place && ::fsync(fd_) != 0) throw io_error("cannot flush file", part_);
  const int fd = fd_;
  fd_ = -1;  // closed, even when close reports an error
  if (::close(fd) != 0) throw io_error("cannot close file", part_);
  if (!in_place && ::rename(part_.c_str(), path_.c_str()) != 0) throw io_error("cannot rename into place", path_);
  committed_ = true;
}

}  // namespace synapse
