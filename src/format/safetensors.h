// safetensors files (Hugging Face's tensor format): an 8-byte little-endian
// header length N, N bytes of JSON ({"name": {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}),
// then the data buffer the offsets point into. Read from a read-only mapping;
// every tensor is checked before use, as the reference implementation
// (huggingface/safetensors) checks them: the header fits the file and a size
// cap, the offsets tile the buffer exactly (no gap, no overlap), each
// tensor's bytes equal its shape times its dtype's size.
//
// Also the sharded layout's index (model.safetensors.index.json:
// {"weight_map": {"tensor": "shard file"}}) and a writer (tests, tools).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "encoding/encoding.h"
#include "format/mapped_file.h"

namespace synapse {

// Largest header we read (the reference implementation's limit,
// MAX_HEADER_SIZE: 100,000,000 bytes, not 100 MiB).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;               // as stored: "F32", "BF16", "I64", ...
  std::optional<Encoding> encoding;  // F32, F16, BF16 (and F64, I8..I64 where ggml has one); nullopt otherwise
  std::vector<uint64_t> shape;     // outermost first (PyTorch order); [] is a scalar
  uint64_t offset = 0;             // absolute, from the start of the file
  uint64_t n_bytes = 0;
};

// The parsed header of a whole file's bytes. Throws synapse::Error:
// Truncated (shorter than 8 bytes or than its header), Overflow (a header
// over kSafetensorsMaxHeaderBytes, a size that overflows), InvalidValue
// (JSON that does not parse or has the wrong structure, naming the tensor),
// DuplicateTensor, UnknownEncoding (a dtype the format does not define),
// OutOfBounds (offsets past the buffer), InvalidValue (offsets that leave a
// gap, overlap or disagree with shape x dtype size). Tensors are returned in
// order of their data offsets.
struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
  uint64_t data_start = 0;                      // 8 + N
};
SafetensorsHeader parse_safetensors(std::span<const uint8_t> file_bytes);

// An opened file: the mapping and its checked header.
class SafetensorsFile {
 public:
  // Throws Error(Io) for a file that cannot be mapped, and parse_safetensors's
  // errors with the path as subject where they name none.
  static SafetensorsFile open(const std::string& path);

  const std::vector<SafetensorsTensor>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const std::shared_ptr<MappedFile>& mapping() const { return file_; }
  std::span<const uint8_t> bytes(const SafetensorsTensor& t) const { return file_->bytes().subspan(t.offset, t.n_bytes); }

 private:
  std::shared_ptr<MappedFile> file_;
  SafetensorsHeader header_;
};

// model.safetensors.index.json's weight_map: tensor name -> shard file name.
// Throws InvalidValue for JSON that does not parse, has no weight_map object,
// a value that is not a string, or a shard name that is not a plain file name
// in the same folder (empty, "." or "..", or holding '/' or '\').
std::map<std::string, std::string> parse_safetensors_index(std::string_view json);

// One tensor to write: its dtype name ("F32", "F16", "BF16", ...), shape
// (outermost first) and bytes (shape x dtype size).
struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::span<const uint8_t> bytes;
};

// Writes a safetensors file (PATH.part, renamed into place): the header
// padded with spaces to a multiple of 8, tensors in the given order.
// Throws InvalidValue when an entry's bytes disagree with its shape and
// dtype, or its dtype is unknown; Io when the file cannot be written.
void write_safetensors(const std::string& path, std::span<const SafetensorsEntry> tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace synapse
