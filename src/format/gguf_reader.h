// Read-only GGUF (v2, v3) reader over an mmap'd file or a memory buffer.
// Every count, offset, dimension and size is checked for overflow and file
// bounds before use; a hostile file yields a typed synapse::Error and never
// a crash, a hang or an unbounded allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/gguf.h"
#include "format/mapped_file.h"

namespace synapse {

class GgufFile {
 public:
  // Maps the file read-only and parses it. Throws synapse::Error.
  static GgufFile open(const std::string& path);
  // Parses a buffer the caller keeps alive (used by the fuzzer and tests).
  static GgufFile parse(std::span<const uint8_t> bytes);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const GgufMetadata& metadata() const { return metadata_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // Start of the tensor data section, in bytes from the start of the file.
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return bytes_.size(); }
  const std::string& path() const { return path_; }
  // The file mapping (null when parsing a caller's buffer); weights read in
  // place keep it alive.
  std::shared_ptr<MappedFile> mapping() const { return mapping_; }

  const GgufTensorInfo* find_tensor(const std::string& name) const;
  // The tensor's bytes inside the mapping (valid while this object lives).
  std::span<const uint8_t> tensor_data(const GgufTensorInfo& t) const;

 private:
  std::shared_ptr<MappedFile> mapping_;  // null when parsing a caller's buffer
  std::span<const uint8_t> bytes_;
  std::string path_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;

  friend class GgufParser;
};

}  // namespace synapse
