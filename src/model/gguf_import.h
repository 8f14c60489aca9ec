// GGUF files: hyperparameters from {arch}.* metadata (llama.cpp's key names
// and defaults), tensors from the tensor infos, ModelInfo from general.* and
// tokenizer.ggml.*.
#pragma once

#include "format/gguf_reader.h"
#include "model/dense_builder.h"
#include "model/moe_builder.h"
#include "model/model.h"

namespace synapse {

// Throws MissingKey naming an absent required key, InvalidValue for a value
// out of range, Unsupported (naming the key) for rope scaling we do not
// build: a type other than none, linear and yarn, or an attn_factor
// without yarn.
DenseHparams read_dense_hparams(const GgufMetadata& metadata, const std::string& arch, const TensorTable& tensors);
// {arch}.expert_count, expert_used_count (MissingKey when absent, InvalidValue
// when k > experts) and the expert widths.
MoeHparams read_moe_hparams(const GgufMetadata& metadata, const std::string& arch, const DenseHparams& dense);
// Whether the file is a mixture of experts: always for the MoE families, and
// for llama when it has llama.expert_count (Mixtral).
bool has_experts(const GgufMetadata& metadata, const std::string& arch, const DenseFamily& family);

// general.name (else `fallback_name`) and the tokenizer.ggml.* special tokens.
ModelInfo gguf_model_info(const GgufMetadata& metadata, const std::string& fallback_name, const std::string& arch,
                          const DenseHparams& hparams);

// Every tensor of the file as a weight in file 0.
TensorTable gguf_tensor_table(const GgufFile& file);

// The model GGUF-style metadata and tensors describe, whatever file format
// they came from: the family of general.architecture, its hparams, the dense
// or MoE graph, weight bounds checked against `files`.
Model model_from_metadata(const GgufMetadata& metadata, const TensorTable& tensors,
                          std::vector<std::shared_ptr<MappedFile>> files, const std::string& fallback_name,
                          const LoadOptions& options);

Model load_gguf_model(const std::string& path, const LoadOptions& options);

}  // namespace synapse
