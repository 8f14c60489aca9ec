#include "model/hf_tensor_names.h"

#include <cstring>
#include <regex>

namespace synapse {
namespace {

struct NamePair {
  const char* hf;  // within a layer ("model.layers.N.") or whole
  const char* gguf;
};

constexpr NamePair kWhole[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

constexpr NamePair kInLayer[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"self_attn.rotary_emb.inv_freq", ""},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"mlp.gate.weight", "ffn_gate_inp.weight"},              // olmoe, qwen*_moe router
    {"block_sparse_moe.gate.weight", "ffn_gate_inp.weight"},  // mixtral router
    {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight"},
    {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight"},
    {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight"},
    {"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight"},
};

// Expert projections, after "experts.E.".
constexpr NamePair kExpert[] = {
    {"gate_proj.weight", "ffn_gate_exps.weight"}, {"up_proj.weight", "ffn_up_exps.weight"},
    {"down_proj.weight", "ffn_down_exps.weight"}, {"w1.weight", "ffn_gate_exps.weight"},  // mixtral
    {"w3.weight", "ffn_up_exps.weight"},          {"w2.weight", "ffn_down_exps.weight"},
};

std::optional<std::string> lookup(const NamePair* begin, const NamePair* end, const std::string& name) {
  for (const NamePair* p = begin; p != end; ++p)
    if (name == p->hf) return std::string(p->gguf);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> gguf_name_of_hf_tensor(const std::string& hf_name) {
  if (auto whole = lookup(std::begin(kWhole), std::end(kWhole), hf_name)) return whole;
  static const std::regex layer(R"(model\.layers\.(0|[1-9][0-9]{0,5})\.(.+))");
  static const std::regex expert(R"((?:mlp|block_sparse_moe)\.experts\.(0|[1-9][0-9]{0,5})\.(.+))");
  std::smatch m;
  if (!std::regex_match(hf_name, m, layer)) return std::nullopt;
  const std::string block = "blk." + m[1].str() + ".", rest = m[2].str();
  if (auto name = lookup(std::begin(kInLayer), std::end(kInLayer), rest))
    return name->empty() ? *name : block + *name;
  std::smatch e;
  if (!std::regex_match(rest, e, expert)) return std::nullopt;
  if (auto name = lookup(std::begin(kExpert), std::end(kExpert), e[2].str()))
    return block + *name + "[" + e[1].str() + "]";
  return std::nullopt;
}

}  // namespace synapse
