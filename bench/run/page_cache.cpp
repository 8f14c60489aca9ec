#include "page_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

namespace synapse::bench {
namespace {

bool drop_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool advised = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return advised;
}

}  // namespace

bool drop_from_page_cache(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return drop_file(path);
  bool all = true;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    if (entry.is_regular_file(ec)) all = drop_file(entry.path().string()) && all;
  return all && !ec;
}

}  // namespace synapse::bench
