// Writes a Hugging Face model folder from a GGUF file (a `synapse synth`
// model): config.json from its metadata, its weights as safetensors under
// transformers' names, in HF's layout: q and k rows of llama-family models in
// rotate-half order (the inverse of the converter's permutation), routed
// experts one tensor per expert, the shared-expert gate as a [1, n] matrix.
// The name table here is the tests' own, written from transformers' module
// paths, so it checks the importer's rather than repeating it.
#pragma once

#include <string>

namespace synapse::test {

struct HfFolderOptions {
  int shards = 1;  // > 1: model-0000i-of-0000n.safetensors and model.safetensors.index.json
};

// Writes `folder` (created) from the F32/F16/BF16 GGUF at `gguf`. No tokenizer
// is written.
void write_hf_folder(const std::string& gguf, const std::string& folder, const HfFolderOptions& options = {});

}  // namespace synapse::test
