// Which encoding each tensor gets in a file of a given type: llama.cpp's
// llama_tensor_get_type (src/llama-quant.cpp) for the file types of
// quant_types.h, with llama-quantize's --tensor-type overrides but not
// --output-tensor-type or --token-embedding-type.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "encoding/encoding.h"
#include "quantize/quant_types.h"
#include "quantize/tensor_type_override.h"

namespace synapse::quant {

// The hyperparameters llama.cpp's mix looks at.
struct ModelFacts {
  std::string arch;       // general.architecture
  uint32_t n_layer = 0;   // {arch}.block_count
  uint32_t n_expert = 0;  // {arch}.expert_count; 0 for dense models
  uint32_t n_head = 0;    // of the first layer
  uint32_t n_head_kv = 0;
};

struct TensorToType {
  std::string_view name;
  std::span<const uint64_t> dims;  // GGUF order: dims[0] is the row
  Encoding stored;  // tensors llama.cpp does not quantize keep this
};

// Each tensor's encoding. `tensors` is the whole model in the order the
// quantizer meets them: the mix counts attn_v and ffn_down tensors as it
// goes (llama.cpp sorts by block, then name; any order that visits blocks
// in turn gives the same types). 1-D tensors, norms, routers etc. keep
// their stored encoding; unless `pure` (llama-quantize --pure), llama.cpp's
// mix for the file type applies (Q6_K output, more bits for attn_v and
// ffn_down in some layers, ...); then a row that is not a whole number of
// blocks falls back (q4_K -> q5_0, q5_K -> q5_1, q6_K -> q8_0, and F16
// where that still does not fit). `has_imatrix`: llama.cpp's one rule for
// these types that depends on an importance matrix being given (q4_0 and
// q5_0 give ffn_down q4_1 / q5_1 in the first eighth of the layers). Throws
// InvalidValue where llama.cpp refuses: an ffn_down tensor of an expert
// model without a valid block index.
std::vector<Encoding> choose_encodings(const QuantType& type, const ModelFacts& model,
                                       std::span<const TensorToType> tensors, bool pure, bool has_imatrix = false);

struct TypeChoice {
  Encoding encoding;
  const TensorTypeOverride* override = nullptr;  // the pattern that chose it, if one did
};

// choose_encodings with overrides, as llama.cpp applies them: when TYPE is
// quantized (f16, bf16 and f32 files ignore them), a tensor llama.cpp may
// quantize whose name the first matching pattern is found in gets that
// pattern's type instead of the mix's, also with `pure`; the row fallback
// still applies (q4_K rows of 64 become q5_0, q8_0 rows of 172 f16). An
// overridden tensor does not advance the mix's attn_v and ffn_down
// counters, so the layers after it get the choices of the layer before
// (as in llama.cpp, which counts inside its mix).
std::vector<TypeChoice> choose_types(const QuantType& type, const ModelFacts& model,
                                     std::span<const TensorToType> tensors, bool pure, bool has_imatrix,
                                     std::span<const TensorTypeOverride> overrides);

// llama.cpp's fallback for rows of row_elems that are not whole blocks of
// `e`: q4_K -> q5_0, q5_K -> q5_1, q6_K -> q8_0, then F16; `e` where they are.
Encoding fit_row(Encoding e, uint64_t row_elems);

}  // namespace synapse::quant
