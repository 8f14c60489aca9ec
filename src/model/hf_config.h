// config.json of a Hugging Face checkpoint read as llama.cpp's converter
// (convert_hf_to_gguf.py) reads it: the GGUF metadata it would write
// (general.architecture and the {arch}.* hyperparameters, under llama.cpp's
// key names), so the GGUF importer's hparams readers and graph builders
// serve both formats, plus what differs in the tensor layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"

namespace synapse {

struct HfConfig {
  GgufMetadata metadata;  // general.architecture, general.name, {arch}.*
  std::string arch;       // the GGUF architecture ("llama", "qwen2moe", ...)
  std::string model_type;  // config.json's model_type ("mistral", "qwen2_moe", ...)
  uint32_t n_vocab = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  // llama and mixtral checkpoints keep q and k rows in HF's rotate-half order;
  // GGUF's llama uses interleaved pairs, so those rows are permuted (as the
  // converter's LlamaModel.permute does).
  bool permute_qk = false;
  bool tied_output = false;  // tie_word_embeddings: lm_head, if stored, is not used
  // Llama 3 rope scaling (rope_scaling.rope_type "llama3"): the per-frequency
  // factors the converter writes as rope_freqs.weight; empty otherwise.
  std::vector<float> rope_freqs;
  std::vector<int32_t> eos_ids;  // eos_token_id (one id or a list)
  std::optional<int32_t> bos_id;
};

// Throws Error: InvalidValue (JSON that does not parse, a field of the wrong
// type or out of range, naming the field), MissingKey (a required field),
// Unsupported (a model_type, activation, rope scaling or layer layout we do
// not build, naming it). `name` becomes general.name.
HfConfig parse_hf_config(std::string_view config_json, const std::string& name);

// The model_types parse_hf_config reads, for messages.
std::string supported_hf_model_types();

}  // namespace synapse
