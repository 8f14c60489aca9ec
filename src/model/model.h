// A loaded model: its verified region graph, the files its weights live in
// (mapped read-only; weights are read in place, never copied at load) and
// the facts generation needs (vocabulary size, special tokens, context).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/mapped_file.h"
#include "ir/graph.h"

namespace synapse {

struct ModelInfo {
  std::string architecture;  // "llama", "qwen2", ...
  std::string name;          // general.name, or the file name
  uint32_t n_vocab = 0;
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_ctx_train = 0;  // context length the model was trained with
  std::optional<int32_t> bos_token;
  std::optional<int32_t> eos_token;
  bool add_bos = true;  // whether a prompt starts with BOS
};

struct Model {
  ModelInfo info;
  ir::Graph graph;  // verified; bounds "chunk" and "max_ctx" set at load
  // files[d.file] holds weight d; kept alive as long as the model.
  std::vector<std::shared_ptr<MappedFile>> files;

  // The bytes of a weight (checked against the file bounds at load).
  std::span<const uint8_t> weight_bytes(ir::TensorId id) const {
    const ir::WeightDescriptor& d = graph.weight(id);
    return files[d.file]->bytes().subspan(d.offset, d.length);
  }
};

// The context a model gets when none is asked for: its training context,
// capped at this.
inline constexpr uint32_t kDefaultMaxCtx = 4096;

struct LoadOptions {
  uint32_t max_ctx = 0;  // 0: the model's training context, capped at kDefaultMaxCtx
  uint32_t chunk = 512;  // most tokens per prefill step
};

// Loads a GGUF file, a llama2.c checkpoint (.bin) or a Hugging Face folder
// (hf_import.h) into a verified graph.
// Throws synapse::Error: Unsupported (architecture, naming it), MissingKey,
// InvalidValue (a tensor of the wrong shape), and the reader's errors.
Model load_model(const std::string& path, const LoadOptions& options = {});

}  // namespace synapse
