// A file written beside its destination as PATH.part and renamed into place
// by commit(): a writer that fails before commit leaves nothing at PATH and
// no PATH.part either. A PATH that is there and not a regular file (a
// device such as /dev/null, a FIFO) is written in place: a rename would
// replace it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace synapse {

// Where a writer of PATH writes until it commits: PATH.part, or PATH itself
// when PATH is there and not a regular file (written in place).
std::string part_path_for(const std::string& path);

class PartFile {
 public:
  // Creates (truncates) PATH.part for writing. Throws Error(Io).
  explicit PartFile(std::string path);
  ~PartFile();  // unless committed: closes and removes PATH.part
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  int fd() const { return fd_; }
  const std::string& part_path() const { return part_; }

  void append(const uint8_t* bytes, size_t n);  // throws Error(Io)
  // Flushes, closes and renames PATH.part to PATH. Throws Error(Io).
  void commit();

 private:
  std::string path_;
  std::string part_;  // == path_ when written in place
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace synapse
