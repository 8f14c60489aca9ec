// Hugging Face checkpoints: a folder with config.json and safetensors weights
// (one model.safetensors, or shards listed by model.safetensors.index.json),
// read in place as the GGUF importer's inputs: config.json becomes the GGUF
// metadata llama.cpp's converter would write (hf_config.h), each tensor a
// weight descriptor under its GGUF name pointing into its mapped shard.
//
// Two things cannot be read in place, and are made once at load into memory
// files (MappedFile::from_bytes): the q and k projections of llama-family
// checkpoints, whose rows are permuted from HF's rotate-half order into
// GGUF's interleaved pairs (the converter's permutation, so a converted file
// and the folder run bit for bit alike), and Llama 3's rope_freqs factors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/mapped_file.h"
#include "ir/graph.h"
#include "model/hf_config.h"
#include "model/model.h"
#include "model/tensor_table.h"

namespace synapse {

struct HfCheckpoint {
  std::string folder;
  HfConfig config;
  // Every weight under its GGUF name, in GGUF order (token_embd, blocks by
  // number, output); routed experts one per expert as "NAME[e]".
  std::vector<ir::WeightDescriptor> weights;
  std::vector<std::shared_ptr<MappedFile>> files;  // weights[i].file indexes these

  TensorTable tensor_table() const;
  std::span<const uint8_t> bytes(const ir::WeightDescriptor& d) const {
    return files[d.file]->bytes().subspan(d.offset, d.length);
  }
};

// Whether `path` is a folder with config.json and safetensors weights (a
// model.safetensors, an index, or exactly one *.safetensors file).
bool is_hf_folder(const std::string& path);

// `path`: the folder, or one .safetensors file in it (which then holds all
// the weights: a folder may keep an F32 and a BF16 copy side by side).
// Throws Error: Io (a missing or unreadable file), Usage (a folder whose
// weights file is ambiguous, listing the candidates), MissingKey (a shard or
// tensor the index names that is absent), Unsupported (a tensor without a
// GGUF counterpart, naming it), UnknownEncoding (a weight that is not F32,
// F16 or BF16), InvalidValue (q or k rows that do not split into heads), and
// the config and safetensors readers' errors; load_hf_model's graph builder
// checks every shape against the config.
HfCheckpoint open_hf_checkpoint(const std::string& path);

Model load_hf_model(const std::string& path, const LoadOptions& options);

}  // namespace synapse
