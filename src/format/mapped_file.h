// A read-only memory mapping of a whole file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace synapse {

class MappedFile {
 public:
  // Throws Error(Io) naming the path and the system error.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Turns the kernel's readahead for faults in the mapping off or back on.
  // Off for small scattered reads (the vectors decoded at load): with
  // readahead each would read megabytes of the file around it, memory a
  // paged session's budget does not have.
  void set_readahead(bool on) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace synapse
