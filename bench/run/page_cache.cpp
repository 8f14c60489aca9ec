#include "page_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <vector>

namespace synapse::bench {
namespace {

// `visit` on `path`, or on every regular file of the folder `path`; true
// when every visit was.
bool each_file(const std::string& path, const std::function<bool(int fd)>& visit) {
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.is_regular_file(ec)) files.push_back(entry.path().string());
  } else {
    files.push_back(path);
  }
  bool all = !ec;
  for (const std::string& file : files) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    all = fd >= 0 && visit(fd) && all;
    if (fd >= 0) ::close(fd);
  }
  return all;
}

bool drop(int fd) { return ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0; }

bool read_through(int fd) {
  std::vector<char> buffer(8u << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace

bool drop_from_page_cache(const std::string& path) { return each_file(path, drop); }

bool reread_into_page_cache(const std::string& path) {
  return each_file(path, [](int fd) { return drop(fd) && read_through(fd); });
}

}  // namespace synapse::bench
