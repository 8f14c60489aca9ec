// synapse quantize: a GGUF model re-encoded to another file type with
// llama.cpp's per-tensor rules, byte for byte what llama.cpp's quantizer
// (llama_model_quantize, as llama-quantize calls it, with or without an
// importance matrix) writes for the same input and type.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "quantize/quant_types.h"
#include "quantize/tensor_type_override.h"

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
  // llama-quantize --imatrix: an importance matrix file (imatrix_file.h),
  // recorded by this name in the output's quantize.imatrix.* keys; empty
  // (or a file without entries, as for llama-quantize): none. Each
  // re-encoded tensor it has an entry for is encoded with its importance
  // (each expert of a 3-D tensor with its own), the others unweighted.
  std::string imatrix_file;
  // llama-quantize --tensor-type / --tensor-type-file, in order (the first
  // pattern found in a tensor's name gives its type; type_policy.h).
  std::vector<TensorTypeOverride> overrides;
};

// One tensor written: its place, name and encodings.
struct TensorDone {
  size_t index;  // 0-based, in output order
  size_t count;
  const std::string& name;
  Encoding from;
  Encoding to;
  bool weighted;  // encoded with its imatrix entry
  const TensorTypeOverride* override;  // the pattern that chose `to`, if one did
};

struct QuantizeSummary {
  size_t tensors = 0;
  size_t converted = 0;  // the others were copied as stored
  size_t weighted = 0;   // of the converted, those encoded with an imatrix entry
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
};

// The output quantize_model would write, laid out without encoding
// anything: each tensor's encoding and data bytes (padding not included),
// in output order, and the file's exact size.
struct PlannedTensor {
  std::string name;
  std::vector<uint64_t> dims;  // as written: dims[0] is the row
  Encoding encoding;
  const TensorTypeOverride* override;  // the pattern that chose it, if one did (into options.overrides)
  uint64_t bytes;
};

struct QuantizePlan {
  std::vector<PlannedTensor> tensors;
  uint64_t alignment = 0;  // each tensor's data starts at a multiple of it, and is padded to one
  uint64_t file_bytes = 0;
};

// Throws what quantize_model throws before it encodes (bad input, imatrix
// or options; a conversion llama.cpp refuses).
QuantizePlan plan_quantize(const QuantizeOptions& options);

// Writes options.output (through a temporary file renamed into place: on
// any failure nothing is left at that path). The file holds the input's
// metadata with general.quantization_version and general.file_type set
// (moved last, as llama.cpp's gguf_set_* do), then with an imatrix
// llama-quantize's quantize.imatrix.* keys (imatrix_metadata), and no split
// keys; its tensors come in llama.cpp's order (by block, then name), each
// aligned to 32 bytes or the input's general.alignment. Input tensors may
// be in any encoding with a decoder. Throws synapse::Error: Usage without a type, Io,
// Truncated, BadMagic, ... for unreadable input or imatrix (read_imatrix's
// errors), MissingKey without general.architecture or {arch}.block_count,
// InvalidValue for a block encoding without allow_requantize, a tensor that
// encodes to non-finite values or an imatrix entry whose size is not the
// tensor's row length times its experts (llama.cpp's error, except for
// token_embd, which it then encodes unweighted), Unsupported for an imatrix
// entry of a 4-D tensor (llama.cpp's quantizer aborts), UnknownEncoding for
// an encoding we cannot decode.
QuantizeSummary quantize_model(const QuantizeOptions& options,
                               const std::function<void(const TensorDone&)>& on_tensor = {});

}  // namespace synapse::quant
