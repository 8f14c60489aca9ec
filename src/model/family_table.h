// The decoder families we build, as data: what differs between them is a
// handful of features of the attention block and of the feed-forward block
// (one MLP, or routed experts), not the forward pass.
#pragma once

#include <string>

#include "ir/attributes.h"

namespace synapse {

// How q and k are normalised before RoPE (attn_{q,k}_norm.weight).
enum class QkNorm : uint8_t {
  None,
  PerHead,    // qwen3*: a [head_dim] weight, each head on its own
  FullWidth,  // olmoe: a weight as wide as the projection, whole rows
};

// How a mixture-of-experts layer gates its experts (llama.cpp's
// build_moe_ffn with softmax gating): softmax over all router logits, the
// top k kept, renormalised to sum 1 when normalize_top_k.
struct ExpertFeatures {
  bool normalize_top_k;
  // qwen2moe: an always-on shared expert (ffn_*_shexp) scaled by
  // sigmoid(x . ffn_gate_inp_shexp), added to the routed sum.
  bool shared_expert;
};

struct DenseFamily {
  const char* arch;             // general.architecture
  ir::RopeLayout rope_layout;   // llama.cpp's LLAMA_ROPE_TYPE_NORM or _NEOX
  bool qkv_bias;                // attn_{q,k,v}.bias
  QkNorm qk_norm;
  bool rope_freqs;              // reads rope_freqs.weight (Llama 3 rope scaling) when present
  // Always a mixture of experts ({arch}.expert_count required); otherwise
  // MoE only when the file has {arch}.expert_count (llama: Mixtral).
  bool always_experts;
  ExpertFeatures experts;       // used when the model has experts
};

// The family of a general.architecture value. Throws Error(Unsupported)
// naming it and listing the supported ones.
const DenseFamily& find_family(const std::string& arch);

// The family llama2.c checkpoints belong to.
const DenseFamily& llama_family();

}  // namespace synapse
