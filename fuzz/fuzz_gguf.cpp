// libFuzzer target: the GGUF reader must turn any input into either a parsed
// file or a synapse::Error; anything else (a crash, a sanitizer report, an
// untyped exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "format/gguf_reader.h"
#include "synapse/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    synapse::GgufFile f = synapse::GgufFile::parse(std::span<const uint8_t>(data, size));
    for (const auto& t : f.tensors()) {
      auto bytes = f.tensor_data(t);
      if (bytes.size() != t.n_bytes) std::abort();
      if (!bytes.empty() && (bytes.data() < data || bytes.data() + bytes.size() > data + size))
        std::abort();
    }
    for (const auto& [key, value] : f.metadata().entries()) (void)value.type();
  } catch (const synapse::Error&) {
  }
  return 0;
}
