// libFuzzer target: the imatrix reader (GGUF and legacy layouts) must turn
// any input into either an imatrix whose entries normalise or a
// synapse::Error; anything else (a crash, a sanitizer report, an untyped
// exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "quantize/imatrix_file.h"
#include "synapse/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const synapse::quant::Imatrix m = synapse::quant::parse_imatrix(std::span<const uint8_t>(data, size));
    for (const auto& [name, entry] : m.entries) {
      if (synapse::quant::importance(entry).size() != entry.in_sum2.size()) std::abort();
    }
  } catch (const synapse::Error&) {
  }
  return 0;
}
