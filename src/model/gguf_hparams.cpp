// Reading a decoder's hyperparameters (dense and mixture-of-experts) from GGUF
// metadata.
#include <cmath>
#include <cstdint>
#include <limits>

#include "model/gguf_import.h"
#include "synapse/error.h"

namespace synapse {
namespace {

class ArchKeys {
 public:
  ArchKeys(const GgufMetadata& metadata, const std::string& arch) : md_(metadata), prefix_(arch + ".") {}

  // A required positive count: MissingKey when absent.
  uint32_t count(const std::string& key) const { return checked_count(key, md_.get_int(prefix_ + key)); }
  uint32_t count_or(const std::string& key, uint32_t fallback) const {
    return md_.contains(prefix_ + key) ? count(key) : fallback;
  }
  int64_t integer(const std::string& key) const { return md_.get_int(prefix_ + key); }
  float positive_real(const std::string& key) const { return checked_real(key, /*zero_allowed=*/false); }
  float positive_real_or(const std::string& key, float fallback) const {
    return md_.contains(prefix_ + key) ? positive_real(key) : fallback;
  }
  float non_negative_real(const std::string& key) const { return checked_real(key, /*zero_allowed=*/true); }
  bool contains(const std::string& key) const { return md_.contains(prefix_ + key); }
  std::string full(const std::string& key) const { return prefix_ + key; }
  const std::string& string(const std::string& key) const { return md_.get_string(prefix_ + key); }

  [[noreturn]] void bad(const std::string& key, const std::string& value) const {
    throw Error(ErrorKind::InvalidValue, "metadata " + prefix_ + key + " = " + value + " is out of range",
                Error::kNoOffset, prefix_ + key);
  }

 private:
  uint32_t checked_count(const std::string& key, int64_t v) const {
    if (v <= 0 || v > int64_t{1} << 30) bad(key, std::to_string(v));
    return static_cast<uint32_t>(v);
  }
  float checked_real(const std::string& key, bool zero_allowed) const {
    const double v = md_.get_double(prefix_ + key);
    if (!(v > 0 || (zero_allowed && v == 0)) || v > std::numeric_limits<float>::max()) bad(key, std::to_string(v));
    return static_cast<float>(v);
  }

  const GgufMetadata& md_;
  std::string prefix_;
};

// RoPE scaling as llama.cpp reads it for these architectures
// (llama_model::load_hparams, and the YaRN values llama_context derives):
// - rope.scaling.type absent means "linear", so a factor alone scales;
//   none, linear and yarn are built; longrope (per-frequency tensors of
//   other architectures) and unknown types are refused.
// - The factor is rope.scaling.factor, else the older rope.scale_linear;
//   0 or neither means unscaled, and "none" ignores it.
// - rope.scaling.attn_factor multiplies the rotation's magnitude whatever
//   the type; only YaRN's attributes carry a magnitude, so elsewhere it
//   must be 1.
// - YaRN's other values are llama.cpp's defaults: ext_factor 1 (for type
//   yarn), beta_fast 32, beta_slow 1. The rope.scaling.yarn_* keys and
//   yarn_log_multiplier are read for other architectures only (grok,
//   deepseek2, ...), and rope.scaling.finetuned is only reported.
constexpr float kYarnExtFactor = 1.0f;
constexpr float kYarnBetaFast = 32.0f;
constexpr float kYarnBetaSlow = 1.0f;

float scaling_factor(const ArchKeys& keys) {
  for (const char* key : {"rope.scaling.factor", "rope.scale_linear"}) {
    if (!keys.contains(key)) continue;
    const float factor = keys.non_negative_real(key);
    return factor == 0 ? 1.0f : factor;
  }
  return 1.0f;
}

// The attn_factor llama_context hands ggml's rope for YaRN. ggml scales the
// rotation by attn_factor * (1 + 0.1 ln factor); llama.cpp wants the
// magnitude mscale(factor) (1 + 0.1 ln factor, 1 for factors up to 1), so
// it divides ggml's term out again.
float yarn_attn_factor(float factor, float file_attn_factor) {
  const float mscale = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;
  return mscale * (1.0f / (1.0f + 0.1f * std::log(factor))) * file_attn_factor;
}

// rope.scaling.original_context_length; absent or 0: the training context.
uint32_t yarn_original_context(const ArchKeys& keys, uint32_t n_ctx_train) {
  const std::string key = "rope.scaling.original_context_length";
  return keys.contains(key) && keys.integer(key) != 0 ? keys.count(key) : n_ctx_train;
}

ir::RopeScaling read_rope_scaling(const ArchKeys& keys, uint32_t n_ctx_train) {
  const std::string type = keys.contains("rope.scaling.type") ? keys.string("rope.scaling.type") : "linear";
  const float attn_factor = keys.positive_real_or("rope.scaling.attn_factor", 1.0f);
  if (type == "yarn") {
    const float factor = scaling_factor(keys);
    return ir::RopeYarnScaling{.factor = factor,
                               .original_context = yarn_original_context(keys, n_ctx_train),
                               .ext_factor = kYarnExtFactor,
                               .attn_factor = yarn_attn_factor(factor, attn_factor),
                               .beta_fast = kYarnBetaFast,
                               .beta_slow = kYarnBetaSlow};
  }
  if (type != "none" && type != "linear")
    throw Error(ErrorKind::Unsupported,
                "rope scaling type '" + type + "' is not supported (supported: none, linear, yarn)",
                Error::kNoOffset, keys.full("rope.scaling.type"));
  if (attn_factor != 1.0f)
    throw Error(ErrorKind::Unsupported,
                "rope.scaling.attn_factor " + std::to_string(attn_factor) + " is supported with yarn scaling only",
                Error::kNoOffset, keys.full("rope.scaling.attn_factor"));
  const float factor = type == "linear" ? scaling_factor(keys) : 1.0f;
  if (factor == 1.0f) return ir::RopeNoScaling{};
  return ir::RopeLinearScaling{factor};
}

// vocab_size is optional in llama.cpp: the embedding table's rows say it.
// The builder checks the table's full shape later.
uint32_t vocab_from_embedding(const TensorTable& tensors) {
  const ir::WeightDescriptor* embd = tensors.find("token_embd.weight");
  if (!embd)
    throw Error(ErrorKind::MissingKey, "tensor 'token_embd.weight' is missing", Error::kNoOffset, "token_embd.weight");
  if (embd->shape.size() != 2 || embd->shape[0] <= 0 || embd->shape[0] > int64_t{1} << 30)
    throw Error(ErrorKind::InvalidValue, "tensor 'token_embd.weight' has shape " + to_string(embd->shape) +
                                             ", expected [n_vocab, n_embd]",
                Error::kNoOffset, "token_embd.weight");
  return static_cast<uint32_t>(embd->shape[0]);
}

}  // namespace

DenseHparams read_dense_hparams(const GgufMetadata& metadata, const std::string& arch, const TensorTable& tensors) {
  const ArchKeys keys(metadata, arch);
  DenseHparams hp;
  hp.n_embd = keys.count("embedding_length");
  hp.n_layer = keys.count("block_count");
  hp.n_head = keys.count("attention.head_count");
  hp.n_head_kv = keys.count_or("attention.head_count_kv", hp.n_head);  // llama.cpp: no key, no GQA
  if (hp.n_head % hp.n_head_kv != 0)
    keys.bad("attention.head_count_kv", std::to_string(hp.n_head_kv) + " (does not divide head_count)");
  if (!keys.contains("attention.key_length") && hp.n_embd % hp.n_head != 0)
    keys.bad("attention.head_count", std::to_string(hp.n_head) + " (does not divide embedding_length)");
  hp.head_dim = keys.count_or("attention.key_length", hp.n_embd / hp.n_head);
  // One head_dim serves q, k and v in CausalAttention.
  if (keys.count_or("attention.value_length", hp.head_dim) != hp.head_dim)
    throw Error(ErrorKind::Unsupported, "attention.value_length differs from attention.key_length",
                Error::kNoOffset, keys.full("attention.value_length"));
  hp.rotary_dim = keys.count_or("rope.dimension_count", hp.head_dim);
  if (hp.rotary_dim > hp.head_dim || hp.rotary_dim % 2 != 0)
    keys.bad("rope.dimension_count", std::to_string(hp.rotary_dim) + " (must be even and <= head dim)");
  hp.n_ff = keys.count("feed_forward_length");
  hp.n_ctx_train = keys.count("context_length");
  hp.rms_eps = keys.positive_real("attention.layer_norm_rms_epsilon");
  hp.rope_theta = keys.positive_real_or("rope.freq_base", 10000.0f);  // llama.cpp's default
  hp.rope_scaling = read_rope_scaling(keys, hp.n_ctx_train);
  hp.n_vocab = keys.contains("vocab_size") ? keys.count("vocab_size") : vocab_from_embedding(tensors);
  return hp;
}

MoeHparams read_moe_hparams(const GgufMetadata& metadata, const std::string& arch, const DenseHparams& dense) {
  const ArchKeys keys(metadata, arch);
  MoeHparams moe;
  moe.n_expert = keys.count("expert_count");
  moe.n_expert_used = keys.count("expert_used_count");
  if (moe.n_expert_used > moe.n_expert)
    keys.bad("expert_used_count", std::to_string(moe.n_expert_used) + " (more than expert_count)");
  // llama.cpp: without the expert keys, experts (and the shared expert) are
  // as wide as feed_forward_length.
  moe.n_ff_expert = keys.count_or("expert_feed_forward_length", dense.n_ff);
  moe.n_ff_shared = keys.count_or("expert_shared_feed_forward_length", dense.n_ff);
  return moe;
}

bool has_experts(const GgufMetadata& metadata, const std::string& arch, const DenseFamily& family) {
  return family.always_experts || metadata.contains(arch + ".expert_count");
}

}  // namespace synapse
