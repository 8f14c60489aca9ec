// The safetensors dtype table (the reference implementation's Dtype enum),
// shared by the reader and the writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "encoding/encoding.h"

namespace synapse {

struct SafetensorsDtype {
  std::string_view name;             // "F32", "BF16", "F8_E4M3", ...
  uint32_t bits;                     // per element: 4 (F4), 6 (F6_*), 8 .. 64
  std::optional<Encoding> encoding;  // the ggml encoding with this layout, if any
};

// nullptr for a name the format does not define (names are case-sensitive).
const SafetensorsDtype* find_safetensors_dtype(std::string_view name);

}  // namespace synapse
