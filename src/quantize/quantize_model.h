// synapse quantize: a GGUF model re-encoded to another file type with
// llama.cpp's per-tensor rules, byte for byte what llama.cpp's quantizer
// (llama_model_quantize, no imatrix) writes for the same input and type.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "encoding/encoding.h"
#include "quantize/quant_types.h"

namespace synapse::quant {

struct QuantizeOptions {
  std::string input;
  std::string output;
  const QuantType* type = nullptr;  // from find_quant_type
  int threads = 0;                  // rows encoded in parallel; 0: one per core
  // Re-encode tensors stored in a block encoding (llama.cpp refuses it by
  // default: the result has the errors of both encodings).
  bool allow_requantize = false;
  bool pure = false;  // every quantizable weight gets the type's base encoding (llama-quantize --pure)
};

// One tensor written: its place, name and encodings.
struct TensorDone {
  size_t index;  // 0-based, in output order
  size_t count;
  const std::string& name;
  Encoding from;
  Encoding to;
};

struct QuantizeSummary {
  size_t tensors = 0;
  size_t converted = 0;  // the others were copied as stored
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
};

// Writes options.output (through a temporary file renamed into place: on
// any failure nothing is left at that path). The file holds the input's
// metadata with general.quantization_version and general.file_type set
// (moved last, as llama.cpp's gguf_set_* do) and no split keys; its tensors
// come in llama.cpp's order (by block, then name), each aligned to 32 bytes
// or the input's general.alignment. Input tensors may be in any encoding
// with a decoder. Throws synapse::Error: Usage without a type, Io,
// Truncated, BadMagic, ... for unreadable input, MissingKey without
// general.architecture or {arch}.block_count, InvalidValue for a block
// encoding without allow_requantize or a tensor that encodes to
// non-finite values, UnknownEncoding for one we cannot decode.
QuantizeSummary quantize_model(const QuantizeOptions& options,
                               const std::function<void(const TensorDone&)>& on_tensor = {});

}  // namespace synapse::quant
