// Which encoding each tensor gets for a --type, the way llama.cpp's quantizer
// (src/llama-quant.cpp) chooses it for the matching llama_ftype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "synth/synth_arch.h"

namespace synapse::synth {

struct SynthType {
  const char* name;    // the --type value
  uint32_t file_type;  // llama_ftype, stored as general.file_type
  Encoding base;       // the encoding most weights get
};

// Throws Usage for unknown names.
const SynthType& find_type(const std::string& name);
std::vector<std::string> type_names();

// Whether a file of this type records general.quantization_version.
bool is_quantized(const SynthType& type);

// The tensor's encoding. 1-D tensors and routers stay F32. Otherwise, unless
// `pure`, llama.cpp's mix for the file type applies (Q6_K output, more bits
// for attn_v/ffn_down on some layers, ...); then a row length that is not a
// multiple of the block size falls back as llama.cpp does (q4_K -> q5_0,
// q5_K -> q5_1, q6_K -> q8_0), and to F16 where that still does not fit.
Encoding choose_encoding(const SynthType& type, const TensorSpec& tensor, const SynthShape& shape,
                         bool pure);

}  // namespace synapse::synth
