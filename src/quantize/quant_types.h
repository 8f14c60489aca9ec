// The file types a model can be quantized to: llama.cpp's llama_ftype for
// each, and the encoding most of its weights get. Shared by `synapse
// quantize` and `synapse synth --type`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encoding/encoding.h"

namespace synapse::quant {

// llama.cpp's GGML_QNT_VERSION, which its quantizer records in every file
// (general.quantization_version).
inline constexpr uint32_t kQuantizationVersion = 2;

struct QuantType {
  const char* name;   // as written on the command line: q4_k_m
  const char* alias;  // llama.cpp's name where it differs (q4_k_s), else null
  uint32_t file_type;  // llama_ftype, stored as general.file_type
  Encoding base;       // llama.cpp's default type for that ftype
};

// The type of that name or alias, case-insensitively (Q4_K_M = q4_k_m);
// null when unknown.
const QuantType* find_quant_type(const std::string& name);
std::vector<std::string> quant_type_names();

// Whether an encoding is a block (quantized) type, as ggml_is_quantized.
bool is_block_encoding(Encoding e);

// Whether weights of this file type get a block encoding (and so llama.cpp's
// per-tensor mix and row fallbacks).
inline bool is_quantized(const QuantType& type) { return is_block_encoding(type.base); }

}  // namespace synapse::quant
