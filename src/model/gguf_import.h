// GGUF files: hyperparameters from {arch}.* metadata (llama.cpp's key names
// and defaults), tensors from the tensor infos, ModelInfo from general.* and
// tokenizer.ggml.*.
#pragma once

#include "format/gguf_reader.h"
#include "model/dense_builder.h"
#include "model/model.h"

namespace synapse {

// Throws MissingKey naming an absent required key, InvalidValue for a value
// out of range, Unsupported for a rope scaling type we do not build.
DenseHparams read_dense_hparams(const GgufMetadata& metadata, const std::string& arch, const TensorTable& tensors);

ModelInfo gguf_model_info(const GgufFile& file, const std::string& arch, const DenseHparams& hparams);

// Every tensor of the file as a weight in file 0.
TensorTable gguf_tensor_table(const GgufFile& file);

Model load_gguf_model(const std::string& path, const LoadOptions& options);

}  // namespace synapse
