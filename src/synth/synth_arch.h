// What a synthetic model is: the architecture (as llama.cpp's loader sees
// it), the resolved shape, and the list of tensors with llama.cpp's names and
// GGUF dims. Internal to src/synth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "synth/synth.h"

namespace synapse::synth {

// How an architecture normalizes q and k before RoPE.
enum class QkNorm {
  None,
  PerHead,    // qwen3*: attn_q_norm/attn_k_norm of [head_dim], applied per head
  FullWidth,  // olmoe: over the whole projection, [n_head * head_dim]
};

// One architecture, as data: the loader-visible features the builder needs.
struct ArchSpec {
  const char* name;       // the --arch value
  const char* gguf_arch;  // general.architecture (mixtral is "llama" with experts)
  bool moe;               // ffn_gate_inp + merged 3-D expert tensors instead of ffn_gate/up/down
  bool shared_expert;     // qwen2moe: ffn_*_shexp and the ffn_gate_inp_shexp gate
  bool qkv_bias;          // attn_{q,k,v}.bias
  QkNorm qk_norm;
  // Expert width lives in {arch}.expert_feed_forward_length; without it the
  // loader sizes the experts with feed_forward_length (olmoe, mixtral).
  bool expert_ff_key;
  bool head_dim_keys;  // writes attention.key_length/value_length (qwen3*)
  bool can_tie;        // the loader reuses token_embd when output.weight is absent
  bool rope_freqs;     // the loader reads rope_freqs.weight (llama3 rope scaling)
  // The loader sizes attn_k_norm as n_embd, so k must be as wide as q (olmoe).
  bool kv_heads_equal_heads;
  const char* vocab_family;  // default tokenizer family, see synth_vocab.h
};

// The architecture of that --arch name, or null.
const ArchSpec* find_arch(const std::string& name);
std::vector<std::string> arch_names();

// Hyperparameters after preset, architecture and overrides are combined.
struct SynthShape {
  std::string preset;
  uint32_t n_layer = 0;
  uint32_t n_embd = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;
  uint32_t n_ff = 0;  // width of the FFN tensors: per expert for MoE architectures
  uint32_t n_vocab = 0;
  uint32_t n_expert = 0;  // 0 for dense architectures
  uint32_t n_expert_used = 0;
  uint32_t n_ctx = 0;
  float rope_theta = 0;
  float rms_eps = 0;
  bool tied = false;         // no output.weight: the loader reuses token_embd
  bool llama3_rope = false;  // rope_freqs.weight holds llama3's per-frequency factors
  SynthRopeScaling rope_scaling;
  std::string vocab_family;

  // qwen2moe's shared expert is as wide as the routed experts a token uses.
  uint32_t n_ff_shared() const { return n_ff * n_expert_used; }
};

// The architecture named by opts.arch, or else the preset's own (llama for
// tiny). Throws Usage for unknown architecture or preset names.
const ArchSpec& resolve_arch(const SynthOptions& opts);

// Combines preset, architecture, overrides and rope scaling, and checks the
// result. Throws Usage for unknown presets, inconsistent shapes and rope
// scaling options.
SynthShape resolve_shape(const SynthOptions& opts, const ArchSpec& arch);
std::vector<std::string> preset_names();

// What a tensor is for: drives the distribution of its random values
// (synth_weights.h). Its encoding follows from its name, as in llama.cpp's
// quantizer (quantize/type_policy.h).
enum class TensorRole {
  TokenEmbd,
  Output,
  AttnQ,
  AttnK,
  AttnV,
  AttnOutput,
  FfnGate,
  FfnUp,
  FfnDown,
  Router,      // ffn_gate_inp
  SharedGate,  // ffn_gate_inp_shexp: a 1-D projection onto one gate value
  Norm,
  Bias,
  RopeFreqs,
};

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: dims[0] is the contiguous input dimension
  TensorRole role;
  int layer = -1;  // block index, -1 outside the blocks
};

// Every tensor llama.cpp's loader expects for this architecture and shape, in
// file order.
std::vector<TensorSpec> arch_tensors(const ArchSpec& arch, const SynthShape& shape);

// The {arch}.* hyperparameter keys llama.cpp reads.
void write_arch_metadata(GgufMetadata& md, const ArchSpec& arch, const SynthShape& shape);

}  // namespace synapse::synth
