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

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace synapse
