// libFuzzer target: the safetensors header reader must turn any input into
// either a header whose tensors tile the input's data buffer exactly or a
// synapse::Error; the index reader, given the same bytes as text, into
// plain shard file names or a synapse::Error; the config.json reader, given
// them too, into llama.cpp metadata or a synapse::Error. Anything else (a crash, a
// sanitizer report, an untyped exception, a broken invariant) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "format/safetensors.h"
#include "model/hf_config.h"
#include "synapse/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const synapse::SafetensorsHeader h = synapse::parse_safetensors(std::span<const uint8_t>(data, size));
    if (h.data_start < 8 || h.data_start > size) std::abort();
    uint64_t at = h.data_start;
    for (const auto& t : h.tensors) {
      if (t.offset != at || t.n_bytes > size - t.offset) std::abort();  // consecutive, within the input
      if (t.dtype.empty() || t.name == "__metadata__") std::abort();
      at += t.n_bytes;
    }
    if (at != size) std::abort();  // the last tensor ends the file
  } catch (const synapse::Error&) {
  }
  try {
    const auto shards =
        synapse::parse_safetensors_index(std::string_view(reinterpret_cast<const char*>(data), size));
    for (const auto& [name, file] : shards) {
      if (file.empty() || file == "." || file == ".." || file.find_first_of("/\\") != std::string::npos) std::abort();
    }
  } catch (const synapse::Error&) {
  }
  try {
    const synapse::HfConfig c =
        synapse::parse_hf_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    if (c.n_head == 0 || c.n_head_kv == 0 || c.n_head % c.n_head_kv != 0) std::abort();
  } catch (const synapse::Error&) {
  }
  return 0;
}
