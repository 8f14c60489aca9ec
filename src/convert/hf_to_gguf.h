// synapse convert: a Hugging Face model folder written as a GGUF file that
// llama.cpp loads, as its convert_hf_to_gguf.py writes one: llama.cpp's
// tensor names (q and k rows of llama-family models permuted into its rope
// layout, routed experts merged into one 3-D tensor per projection), the
// metadata of config.json under llama.cpp's keys, the tokenizer as
// tokenizer.ggml.* (padded to the embedding's rows) and the chat template.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "format/gguf.h"
#include "model/hf_import.h"

namespace synapse::convert {

struct ConvertOptions {
  std::string input;   // the folder, or one .safetensors file in it
  std::string output;  // the GGUF to write
  // "source" (each matrix in its stored type), "f32", "f16", "bf16", or any
  // quantize file type (q8_0, q4_k_m, ...: the folder is written at source
  // precision to a temporary file that quantize_model then re-encodes with
  // llama.cpp's per-tensor rules). Vectors (norms, biases) are always F32.
  std::string type = "source";
  std::string tokenizer;  // a tokenizer file instead of the folder's own
  int threads = 0;        // 0: one per core
};

struct ConvertSummary {
  size_t tensors = 0;
  uint64_t bytes = 0;  // of the file written
};

// The metadata convert writes (without general.file_type): the config's
// llama.cpp keys, the tokenizer file's vocabulary as tokenizer.ggml.*
// (padded to the embedding's rows; none when `tokenizer_path` is empty), the
// special tokens config.json names that the tokenizer does not, and the
// folder's chat template. Throws the tokenizer loader's errors.
GgufMetadata converted_metadata(const HfCheckpoint& checkpoint, const std::string& tokenizer_path);

// `progress(done, total)` reports bytes written. Throws synapse::Error: the
// Hugging Face reader's errors (hf_import.h), MissingKey for a folder without
// a tokenizer, Usage for an unknown type, InvalidValue for experts that do
// not merge (missing, or of different shapes), and the writer's and
// quantizer's errors. Nothing is left at `output` on failure.
ConvertSummary convert_hf_to_gguf(const ConvertOptions& options,
                                  const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace synapse::convert
