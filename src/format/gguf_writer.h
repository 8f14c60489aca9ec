// GGUF v3 writer: metadata in insertion order, then tensor infos, then the
// tensor data, each tensor aligned to general.alignment. The file is written
// to PATH.part and renamed into place, so a failure leaves no partial
// file behind.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/gguf.h"

namespace synapse {

class GgufWriter {
 public:
  GgufMetadata& metadata() { return metadata_; }

  // Fills dst (exactly n_bytes long) with the tensor's encoded data. Called
  // once per tensor, in order, while writing, so large models are produced
  // without holding all weights in memory.
  using Producer = std::function<void(uint8_t* dst, uint64_t n_bytes)>;

  // Declares a tensor. Its byte size is derived from dims and encoding.
  // Throws DuplicateTensor, UnknownEncoding, InvalidValue.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, Encoding encoding,
                  Producer produce);
  // Convenience: a tensor whose bytes are already in memory (copied).
  void add_tensor_bytes(const std::string& name, std::vector<uint64_t> dims, Encoding encoding,
                        std::vector<uint8_t> bytes);

  // Writes the file. `progress`, if set, is called after each tensor with
  // (bytes written, file bytes).
  void write(const std::string& path,
             const std::function<void(uint64_t, uint64_t)>& progress = {}) const;

  // The size write() would give the file, exactly (header, metadata, tensor
  // infos, data and alignment padding), without producing any tensor.
  uint64_t file_bytes() const;

 private:
  struct Layout {
    std::vector<uint8_t> header;   // magic to the last tensor info
    std::vector<uint64_t> offsets;  // of each tensor in the data section
    uint64_t data_start = 0;
    uint64_t total = 0;
  };
  // Throws InvalidValue for a general.alignment that is not a uint32 power of two.
  Layout layout() const;

  struct Pending {
    GgufTensorInfo info;
    Producer produce;
  };
  GgufMetadata metadata_;
  std::vector<Pending> tensors_;
};

}  // namespace synapse
