// Writes safetensors files as the reference implementation serializes them:
// the JSON header ("__metadata__" first, then each tensor's dtype, shape and
// data_offsets) padded with spaces to a multiple of 8 bytes, then the data.
// Unlike the reference, tensors keep the caller's order.
#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

#include "format/part_file.h"
#include "format/safetensors.h"
#include "format/safetensors_dtype.h"
#include "synapse/error.h"

namespace synapse {

namespace {


// The header's bytes; throws for an entry a reader would refuse.
std::string header_of(std::span<const SafetensorsEntry> tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    for (const auto& [key, value] : metadata)
      if (key.find('\0') != std::string::npos || value.find('\0') != std::string::npos)
        throw Error(ErrorKind::InvalidValue, "__metadata__ holds a NUL byte", Error::kNoOffset, key);
    h["__metadata__"] = metadata;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsEntry& t : tensors) {
    if (t.name == "__metadata__" || t.name.find('\0') != std::string::npos)
      throw Error(ErrorKind::InvalidValue, "not a usable tensor name", Error::kNoOffset, t.name);
    if (!names.insert(t.name).second)
      throw Error(ErrorKind::DuplicateTensor, "tensor given twice", Error::kNoOffset, t.name);
    const SafetensorsDtype* d = find_safetensors_dtype(t.dtype);
    if (!d) throw Error(ErrorKind::InvalidValue, "unknown dtype '" + t.dtype + "'", Error::kNoOffset, t.name);
    uint64_t bits = d->bits;
    for (uint64_t dim : t.shape) {
      if (dim != 0 && bits > UINT64_MAX / dim)
        throw Error(ErrorKind::Overflow, "tensor byte size overflows", Error::kNoOffset, t.name);
      bits *= dim;
    }
    if (bits % 8 != 0 || bits / 8 != t.bytes.size())
      throw Error(ErrorKind::InvalidValue,
                  "tensor has " + std::to_string(t.bytes.size()) + " bytes, its shape and dtype need " +
                      (bits % 8 ? "a fractional number" : std::to_string(bits / 8)),
                  Error::kNoOffset, t.name);
    if (offset > UINT64_MAX - t.bytes.size())
      throw Error(ErrorKind::Overflow, "data size overflows", Error::kNoOffset, t.name);
    nlohmann::ordered_json info;
    info["dtype"] = t.dtype;
    info["shape"] = t.shape;
    info["data_offsets"] = {offset, offset + t.bytes.size()};
    h[t.name] = std::move(info);
    offset += t.bytes.size();
  }
  std::string text;
  try {
    text = h.dump();  // strict: a name or value that is not UTF-8 throws
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("header cannot be written as JSON: ") + e.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');
  if (text.size() > kSafetensorsMaxHeaderBytes)
    throw Error(ErrorKind::Overflow, "header of " + std::to_string(text.size()) + " bytes is over the limit");
  return text;
}


}  // namespace

void write_safetensors(const std::string& path, std::span<const SafetensorsEntry> tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string header = header_of(tensors, metadata);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));

  PartFile file(path);  // a failure leaves nothing behind
  file.append(length, sizeof length);
  file.append(reinterpret_cast<const uint8_t*>(header.data()), header.size());
  for (const SafetensorsEntry& t : tensors) file.append(t.bytes.data(), t.bytes.size());
  file.commit();
}

}  // namespace synapse
