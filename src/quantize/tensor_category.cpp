#include "quantize/tensor_category.h"

#include <cstdio>
#include <string>
#include <utility>

namespace synapse::quant {

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Name parts of tensors llama.cpp leaves in their stored type, each with its
// reason there: routers, Mamba/Kimi/RWKV/MiniMax/T5 small weights,
// multimodal position and patch tensors, audio codebooks.
constexpr std::string_view kNeverQuantized[] = {
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
};

}  // namespace

TensorCategory tensor_category(std::string_view name) {
  using C = TensorCategory;
  if (name == "output.weight") return C::Output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return C::TokenEmbd;
  // In llama.cpp's order: the first match wins.
  constexpr std::pair<std::string_view, TensorCategory> kParts[] = {
      {"attn_qkv.weight", C::AttnQkv},
      {"attn_kv_b.weight", C::AttnKvB},
      {"attn_v.weight", C::AttnV},
      {"attn_k.weight", C::AttnK},
      {"attn_q.weight", C::AttnQ},
      {"attn_output.weight", C::AttnOutput},
      {"ffn_up", C::FfnUp},
      {"ffn_gate", C::FfnGate},
      {"ffn_down", C::FfnDown},
  };
  for (const auto& [part, category] : kParts)
    if (contains(name, part)) return category;
  return C::Other;
}

bool is_attn_v_like(TensorCategory c) {
  return c == TensorCategory::AttnV || c == TensorCategory::AttnQkv || c == TensorCategory::AttnKvB;
}

int significant_dims(std::span<const uint64_t> dims) {
  int n = static_cast<int>(dims.size());
  while (n > 1 && dims[n - 1] == 1) --n;
  return n < 1 ? 1 : n;
}

bool allows_quantization(std::string_view name, std::span<const uint64_t> dims) {
  if (significant_dims(dims) < 2) return false;
  if (!name.ends_with("weight")) return false;
  for (std::string_view part : kNeverQuantized)
    if (contains(name, part)) return false;
  // BERT's position and token-type embeddings (LLM_TN's exact names).
  return name != "position_embd.weight" && name != "token_types.weight";
}

int block_index(std::string_view name) {
  // sscanf's own rules (sign, leading blanks), as llama.cpp parses it.
  const std::string text(name);
  int index = -1;
  return std::sscanf(text.c_str(), "blk.%d.", &index) == 1 ? index : -1;
}

}  // namespace synapse::quant
