// Each tensor's encoding in a GGUF file, by name: what the quantize tests
// check a written file against.
#pragma once

#include <map>
#include <string>

#include "format/gguf_reader.h"

namespace synapse::test {

inline std::map<std::string, Encoding> tensor_encodings(const std::string& path) {
  std::map<std::string, Encoding> out;
  const GgufFile file = GgufFile::open(path);
  for (const GgufTensorInfo& t : file.tensors()) out[t.name] = t.encoding;
  return out;
}

}  // namespace synapse::test
