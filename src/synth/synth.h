// synapse synth: random-weight GGUF files of real architectures, with
// llama.cpp's exact tensor names and metadata keys, deterministic for a seed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace synapse {

// RoPE scaling written as llama.cpp's {arch}.rope.scaling.* keys.
struct SynthRopeScaling {
  std::string type;  // none, linear or yarn; empty: no keys
  float factor = 0;  // rope.scaling.factor: linear and yarn need one
  // yarn: rope.scaling.original_context_length; 0: no key (llama.cpp then
  // takes context_length)
  uint32_t original_context = 0;
};

struct SynthOptions {
  // llama, qwen2, qwen3, olmoe, qwen2moe, qwen3moe, mixtral; empty: the
  // preset's own architecture (llama for tiny).
  std::string arch;
  // tiny, smollm2-135m, qwen2.5-0.5b, llama-3.2-1b, olmoe-1b-7b,
  // qwen3-30b-a3b; empty: tiny
  std::string preset;
  std::string type;    // f32, f16, bf16, q8_0, q4_0, q4_k, q6_k, q4_k_m, ...; empty: f32
  uint64_t seed = 0;
  // Every quantizable weight gets `type` (as llama-quantize --pure), instead
  // of llama.cpp's per-tensor mix for that file type.
  bool pure = false;
  unsigned threads = 0;  // threads generating a tensor's rows; 0: one per core
  // Explicit overrides of the preset's shape. n_ff is the width of the FFN
  // tensors: per expert for MoE architectures. head_dim other than
  // n_embd / n_head needs an architecture that writes attention.key_length
  // (qwen3, qwen3moe); a preset's own head_dim (qwen3-30b-a3b: 128) stays
  // when n_embd or n_head are overridden, as in the Qwen3 family.
  // n_ctx is the context_length the file states.
  std::optional<uint32_t> n_layer, n_embd, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_expert,
      n_expert_used, n_ctx;
  SynthRopeScaling rope_scaling;
  // A real vocabulary to embed instead of the made-up one: a tokenizer.json,
  // SentencePiece .model or GGUF file. n_vocab becomes its size.
  std::string vocab_file;
};

std::vector<std::string> synth_arches();
std::vector<std::string> synth_presets();
std::vector<std::string> synth_types();

// Writes the model to `path`. Throws synapse::Error (Usage for unknown
// arch/preset/type or inconsistent shapes). `progress(bytes written, file
// bytes)` is called as tensors are written.
void synth_model(const SynthOptions& opts, const std::string& path,
                 const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace synapse
