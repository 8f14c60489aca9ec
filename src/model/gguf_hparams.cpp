// Reading a decoder's hyperparameters (dense and mixture-of-experts) from GGUF
// metadata.
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
  float positive_real(const std::string& key) const {
    const double v = md_.get_double(prefix_ + key);
    if (!(v > 0) || v > std::numeric_limits<float>::max()) bad(key, std::to_string(v));
    return static_cast<float>(v);
  }
  float positive_real_or(const std::string& key, float fallback) const {
    return md_.contains(prefix_ + key) ? positive_real(key) : fallback;
  }
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

  const GgufMetadata& md_;
  std::string prefix_;
};

// rope.scaling.type: none (or absent) and linear are built; yarn and others
// would silently compute something else, so they are refused.
ir::RopeScaling read_rope_scaling(const ArchKeys& keys) {
  if (!keys.contains("rope.scaling.type")) return ir::RopeNoScaling{};
  const std::string& type = keys.string("rope.scaling.type");
  if (type == "none") return ir::RopeNoScaling{};
  if (type == "linear") return ir::RopeLinearScaling{keys.positive_real("rope.scaling.factor")};
  throw Error(ErrorKind::Unsupported, "rope scaling type '" + type + "' is not supported (supported: none, linear)",
              Error::kNoOffset, keys.full("rope.scaling.type"));
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
  hp.rope_scaling = read_rope_scaling(keys);
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
