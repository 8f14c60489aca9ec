// The architectures synth can write, as data, and the one builder that turns
// an architecture and a shape into llama.cpp's tensor list and metadata keys.
// Names and dims follow llama.cpp's loader (src/llama-arch.cpp names,
// src/models/<arch>.cpp shapes).
#include <string>

#include "synth/synth_arch.h"

namespace synapse::synth {

namespace {

// clang-format off
constexpr ArchSpec kArches[] = {
//  name        gguf_arch   moe    shexp  qkv_b  qk_norm             exp_ff hd_keys tie    rope_f kv=h   vocab
  {"llama",    "llama",    false, false, false, QkNorm::None,      false, false, true,  true,  false, "llama3"},
  {"qwen2",    "qwen2",    false, false, true,  QkNorm::None,      false, false, true,  false, false, "qwen2"},
  {"qwen3",    "qwen3",    false, false, false, QkNorm::PerHead,   false, true,  true,  false, false, "qwen2"},
  {"olmoe",    "olmoe",    true,  false, false, QkNorm::FullWidth, false, false, false, false, true,  "olmo"},
  {"qwen2moe", "qwen2moe", true,  true,  true,  QkNorm::None,      true,  false, false, false, false, "qwen2"},
  {"qwen3moe", "qwen3moe", true,  false, false, QkNorm::PerHead,   true,  true,  true,  false, false, "qwen2"},
  {"mixtral",  "llama",    true,  false, false, QkNorm::None,      false, false, true,  true,  false, "llama3"},
};
// clang-format on

std::string block(int layer, const char* what) {
  return "blk." + std::to_string(layer) + "." + what;
}

class TensorListBuilder {
 public:
  TensorListBuilder(const ArchSpec& arch, const SynthShape& shape) : arch_(arch), s_(shape) {}

  std::vector<TensorSpec> build() {
    const uint64_t embd = s_.n_embd;
    add("token_embd.weight", {embd, s_.n_vocab}, TensorRole::TokenEmbd);
    if (s_.llama3_rope) add("rope_freqs.weight", {s_.head_dim / 2}, TensorRole::RopeFreqs);
    for (uint32_t i = 0; i < s_.n_layer; ++i) add_block(static_cast<int>(i));
    add("output_norm.weight", {embd}, TensorRole::Norm);
    if (!s_.tied) add("output.weight", {embd, s_.n_vocab}, TensorRole::Output);
    return std::move(out_);
  }

 private:
  void add(std::string name, std::vector<uint64_t> dims, TensorRole role, int layer = -1) {
    out_.push_back({std::move(name), std::move(dims), role, layer});
  }
  void add(int layer, const char* what, std::vector<uint64_t> dims, TensorRole role) {
    add(block(layer, what), std::move(dims), role, layer);
  }

  void add_block(int i) {
    const uint64_t embd = s_.n_embd;
    const uint64_t q_width = uint64_t{s_.n_head} * s_.head_dim;
    const uint64_t kv_width = uint64_t{s_.n_head_kv} * s_.head_dim;

    add(i, "attn_norm.weight", {embd}, TensorRole::Norm);
    add(i, "attn_q.weight", {embd, q_width}, TensorRole::AttnQ);
    add(i, "attn_k.weight", {embd, kv_width}, TensorRole::AttnK);
    add(i, "attn_v.weight", {embd, kv_width}, TensorRole::AttnV);
    if (arch_.qkv_bias) {
      add(i, "attn_q.bias", {q_width}, TensorRole::Bias);
      add(i, "attn_k.bias", {kv_width}, TensorRole::Bias);
      add(i, "attn_v.bias", {kv_width}, TensorRole::Bias);
    }
    if (arch_.qk_norm != QkNorm::None) {
      const bool per_head = arch_.qk_norm == QkNorm::PerHead;
      add(i, "attn_q_norm.weight", {per_head ? s_.head_dim : q_width}, TensorRole::Norm);
      add(i, "attn_k_norm.weight", {per_head ? s_.head_dim : kv_width}, TensorRole::Norm);
    }
    add(i, "attn_output.weight", {q_width, embd}, TensorRole::AttnOutput);
    add(i, "ffn_norm.weight", {embd}, TensorRole::Norm);

    const uint64_t ff = s_.n_ff;
    if (!arch_.moe) {
      add(i, "ffn_gate.weight", {embd, ff}, TensorRole::FfnGate);
      add(i, "ffn_up.weight", {embd, ff}, TensorRole::FfnUp);
      add(i, "ffn_down.weight", {ff, embd}, TensorRole::FfnDown);
      return;
    }
    const uint64_t experts = s_.n_expert;
    add(i, "ffn_gate_inp.weight", {embd, experts}, TensorRole::Router);
    add(i, "ffn_gate_exps.weight", {embd, ff, experts}, TensorRole::FfnGate);
    add(i, "ffn_up_exps.weight", {embd, ff, experts}, TensorRole::FfnUp);
    add(i, "ffn_down_exps.weight", {ff, embd, experts}, TensorRole::FfnDown);
    if (arch_.shared_expert) {
      const uint64_t shared_ff = s_.n_ff_shared();
      add(i, "ffn_gate_inp_shexp.weight", {embd}, TensorRole::SharedGate);
      add(i, "ffn_gate_shexp.weight", {embd, shared_ff}, TensorRole::FfnGate);
      add(i, "ffn_up_shexp.weight", {embd, shared_ff}, TensorRole::FfnUp);
      add(i, "ffn_down_shexp.weight", {shared_ff, embd}, TensorRole::FfnDown);
    }
  }

  const ArchSpec& arch_;
  const SynthShape& s_;
  std::vector<TensorSpec> out_;
};

}  // namespace

const ArchSpec* find_arch(const std::string& name) {
  for (const ArchSpec& a : kArches)
    if (name == a.name) return &a;
  return nullptr;
}

std::vector<std::string> arch_names() {
  std::vector<std::string> names;
  for (const ArchSpec& a : kArches) names.emplace_back(a.name);
  return names;
}

std::vector<TensorSpec> arch_tensors(const ArchSpec& arch, const SynthShape& shape) {
  return TensorListBuilder(arch, shape).build();
}

void write_arch_metadata(GgufMetadata& md, const ArchSpec& arch, const SynthShape& s) {
  const std::string a = arch.gguf_arch;
  auto u32 = [&](const std::string& key, uint32_t v) { md.set(a + "." + key, GgufValue(v)); };
  auto f32 = [&](const std::string& key, float v) { md.set(a + "." + key, GgufValue(v)); };

  u32("context_length", s.n_ctx);
  u32("embedding_length", s.n_embd);
  u32("block_count", s.n_layer);
  // With a separate expert width key, feed_forward_length is the dense
  // equivalent (what a token's routed experts add up to), as in real files.
  u32("feed_forward_length", arch.expert_ff_key ? s.n_ff * s.n_expert_used : s.n_ff);
  u32("attention.head_count", s.n_head);
  u32("attention.head_count_kv", s.n_head_kv);
  if (arch.head_dim_keys) {
    u32("attention.key_length", s.head_dim);
    u32("attention.value_length", s.head_dim);
  }
  f32("attention.layer_norm_rms_epsilon", s.rms_eps);
  f32("rope.freq_base", s.rope_theta);
  u32("rope.dimension_count", s.head_dim);
  const SynthRopeScaling& scaling = s.rope_scaling;
  if (!scaling.type.empty()) md.set(a + ".rope.scaling.type", GgufValue(scaling.type));
  if (scaling.factor != 0) f32("rope.scaling.factor", scaling.factor);
  if (scaling.original_context != 0) u32("rope.scaling.original_context_length", scaling.original_context);
  u32("vocab_size", s.n_vocab);
  if (arch.moe) {
    u32("expert_count", s.n_expert);
    u32("expert_used_count", s.n_expert_used);
  }
  if (arch.expert_ff_key) u32("expert_feed_forward_length", s.n_ff);
  if (arch.shared_expert) u32("expert_shared_feed_forward_length", s.n_ff_shared());
}

}  // namespace synapse::synth
