// The units a precision profile gives encodings to (SPEC §12): a model's
// regions as the quantizer sees them. Each layer's attention, its MLP (or
// all its experts at once: a merged expert tensor is one tensor in the
// file), the token embedding and the output head, each with the tensors it
// reads that llama.cpp's quantizer may quantize. `synapse sensitivity`
// measures them one at a time; `quantize --target-bytes` picks a type each.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "model/model.h"
#include "quantize/tensor_type_override.h"

namespace synapse::calibrate {

struct PrecisionGroup {
  std::string name;                  // "Attention(3)", "Mlp(3)", "Experts(3)", "Embedding", "Logits"
  std::vector<std::string> tensors;  // GGUF tensor names, merged expert tensors once
};

// In region order; a tensor read by several regions (a tied embedding and
// output head) belongs to the first. Groups without a quantizable tensor
// are left out.
std::vector<PrecisionGroup> precision_groups(const ir::Graph& graph);

// A copy of `model` with `tensors` re-encoded to `encoding` (each fitted to
// its rows by quant::fit_row, on the quantizer's threads), their new bytes in a scratch file at scratch_path that is
// mapped and unlinked at once (the mapping keeps it). Sets *bytes to the
// re-encoded tensors' bytes. Throws Error(Io) for the scratch file and
// Error(InvalidValue) for an unknown tensor name or rows that encode to
// non-finite values.
Model with_encoding(const Model& model, std::span<const std::string> tensors, Encoding encoding,
                    const std::string& scratch_path, uint64_t* bytes);

// Profile items that name regions instead of tensors: "region:Attention(3)",
// "region:Mlp(*)" (every layer), "region:Experts(2)", "region:Embedding",
// "region:Logits" (any case: llama-quantize lower-cases patterns). Each
// becomes one override per tensor of the groups it names, by exact name,
// in its place; other items stay as they are. Throws Error(Usage) for a
// region item that names no group of `graph`.
std::vector<quant::TensorTypeOverride> expand_region_overrides(std::span<const quant::TensorTypeOverride> overrides,
                                                               const ir::Graph& graph);

// `name` as a regular expression that matches it literally.
std::string regex_escaped(const std::string& name);

// The bytes of `tensors` of `model` as they are stored.
uint64_t stored_bytes(const Model& model, std::span<const std::string> tensors);

}  // namespace synapse::calibrate
