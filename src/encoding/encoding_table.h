// The table of known encodings with their codecs (internal to encoding/).
#pragma once

#include <cstdint>

#include "encoding/codecs.h"
#include "encoding/encoding.h"

namespace synapse {

struct EncodingEntry {
  EncodingInfo info;
  codecs::DequantizeFn dequantize;  // null when info.has_codec is false
  codecs::QuantizeFn quantize;
  // ggml's importance-weighted encoder; null where ggml ignores the weights.
  codecs::WeightedQuantizeFn quantize_weighted = nullptr;
};

// The entry for a raw ggml type id, or null when the id is unknown.
const EncodingEntry* find_encoding_entry(uint32_t id);

// The entry for e; throws Error(UnknownEncoding) naming the id when e is not
// in the table.
const EncodingEntry& encoding_entry(Encoding e);

}  // namespace synapse
