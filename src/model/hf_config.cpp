#include "model/hf_config.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/llama3_rope.h"
#include "synapse/error.h"

namespace synapse {
namespace {

using json = nlohmann::json;

// What differs between the model_types we read. Defaults are transformers'
// config class defaults; the converter writes only what the file has.
struct HfFamily {
  const char* model_type;
  const char* arch;
  bool permute_qk;
  const char* expert_count_key;  // nullptr: a dense model
  bool norm_topk_prob;           // the gating our family builds (checked against the config)
  bool expert_width_key;         // experts are moe_intermediate_size wide
  bool shared_expert;            // qwen2_moe: shared_expert_intermediate_size
  double default_rope_theta;
};

// clang-format off
constexpr HfFamily kFamilies[] = {
//  model_type   arch        permute expert_count_key     norm_topk width  shared theta
  {"llama",     "llama",    true,   nullptr,             false,    false, false, 10000.0},
  {"mistral",   "llama",    true,   nullptr,             false,    false, false, 10000.0},
  {"mixtral",   "llama",    true,   "num_local_experts", true,     false, false, 1e6},
  {"qwen2",     "qwen2",    false,  nullptr,             false,    false, false, 10000.0},
  {"qwen3",     "qwen3",    false,  nullptr,             false,    false, false, 10000.0},
  {"olmoe",     "olmoe",    false,  "num_experts",       false,    false, false, 10000.0},
  {"qwen2_moe", "qwen2moe", false,  "num_experts",       false,    true,  true,  10000.0},
  {"qwen3_moe", "qwen3moe", false,  "num_experts",       true,     true,  false, 10000.0},
};
// clang-format on

// The deepest nesting of arrays and objects in JSON text (outside strings).
// config.json is shallow; a deep one is refused before it is parsed.
int json_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A value for a message: numbers and strings as written, containers by type
// (dumping one could recurse as deep as a hostile file nests).
std::string shown(const json& v) { return v.is_primitive() ? v.dump() : std::string(v.type_name()); }

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw Error(ErrorKind::InvalidValue, "config.json: " + field + " " + why, Error::kNoOffset, field);
}

[[noreturn]] void unsupported(const std::string& field, const std::string& what) {
  throw Error(ErrorKind::Unsupported, "config.json: " + what + " is not supported", Error::kNoOffset, field);
}

// Typed, range-checked reads of config.json's top-level fields.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const char* key) const { return j_.at(key); }

  uint32_t count(const char* key) const {
    if (!has(key)) throw Error(ErrorKind::MissingKey, std::string("config.json has no ") + key, Error::kNoOffset, key);
    const json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > int64_t{1} << 30)
      bad(key, "= " + shown(v) + " is not a positive count");
    return static_cast<uint32_t>(v.get<int64_t>());
  }
  uint32_t count_or(const char* key, uint32_t fallback) const { return has(key) ? count(key) : fallback; }
  double real_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > std::numeric_limits<float>::max())
      bad(key, "= " + shown(v) + " is not a positive number");
    return v.get<double>();
  }
  double real(const char* key) const {
    if (!has(key)) throw Error(ErrorKind::MissingKey, std::string("config.json has no ") + key, Error::kNoOffset, key);
    return real_or(key, 0);
  }
  bool flag_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) bad(key, "is not true or false");
    return j_.at(key).get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_string()) bad(key, "is not a string");
    return j_.at(key).get<std::string>();
  }

 private:
  const json& j_;
};

const HfFamily& find_hf_family(const Fields& f) {
  if (!f.has("model_type"))
    throw Error(ErrorKind::MissingKey, "config.json has no model_type", Error::kNoOffset, "model_type");
  const std::string type = f.string_or("model_type", "");
  for (const HfFamily& family : kFamilies)
    if (type == family.model_type) return family;
  throw Error(ErrorKind::Unsupported,
              "config.json: model_type '" + type + "' is not supported (supported: " + supported_hf_model_types() + ")",
              Error::kNoOffset, "model_type");
}

std::optional<int32_t> token_id(const json& v, const char* field) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
    bad(field, "= " + shown(v) + " is not a token id");
  return static_cast<int32_t>(v.get<int64_t>());
}

// The layouts our graphs do not have, refused rather than run wrongly.
void check_layout(const Fields& f, const HfFamily& family) {
  const std::string act = f.string_or("hidden_act", f.string_or("hidden_activation", "silu"));
  if (act != "silu") unsupported("hidden_act", "the activation '" + act + "'");
  // qwen2* always carry q/k/v biases (no flag); the others have none.
  if (f.flag_or("attention_bias", false) && std::string(family.arch) != "qwen2" &&
      std::string(family.arch) != "qwen2moe")
    unsupported("attention_bias", "attention_bias: true");
  if (f.flag_or("mlp_bias", false)) unsupported("mlp_bias", "mlp_bias: true");
  if (f.real_or("partial_rotary_factor", 1.0) != 1.0) unsupported("partial_rotary_factor", "partial rotary embedding");
  if (f.has("clip_qkv")) unsupported("clip_qkv", "clip_qkv");
  if (family.expert_count_key) {
    if (f.count_or("decoder_sparse_step", 1) != 1) unsupported("decoder_sparse_step", "dense layers between MoE layers");
    if (f.has("mlp_only_layers") && !(f.at("mlp_only_layers").is_array() && f.at("mlp_only_layers").empty()))
      unsupported("mlp_only_layers", "dense layers between MoE layers (mlp_only_layers)");
    if (f.flag_or("norm_topk_prob", family.norm_topk_prob) != family.norm_topk_prob)
      unsupported("norm_topk_prob", std::string("norm_topk_prob: ") + (family.norm_topk_prob ? "false" : "true") +
                                        " for model_type " + family.model_type);
  }
}

// rope_scaling's Llama 3 fields, with transformers' defaults.
Llama3RopeScaling llama3_scaling(const json& scaling) {
  const Fields s(scaling);
  const Llama3RopeScaling l{s.real_or("factor", 8.0), s.real_or("low_freq_factor", 1.0),
                            s.real_or("high_freq_factor", 4.0), s.real_or("original_max_position_embeddings", 8192.0)};
  if (!(l.high_freq_factor > l.low_freq_factor)) bad("rope_scaling.high_freq_factor", "must exceed low_freq_factor");
  return l;
}

// rope_scaling: none ("default"), linear, yarn, or (llama) llama3.
void read_rope_scaling(const Fields& f, HfConfig& c, const std::string& prefix, double theta, uint32_t head_dim) {
  const char* key = f.has("rope_scaling") ? "rope_scaling" : "rope_parameters";
  if (!f.has(key)) return;
  const json& scaling = f.at(key);
  if (!scaling.is_object()) bad("rope_scaling", "is not an object");
  const Fields s(scaling);
  const std::string type = s.string_or("rope_type", s.string_or("type", "default"));
  if (type == "default") return;
  if (type == "llama3" && c.arch == "llama") {
    c.rope_freqs = llama3_rope_factors(llama3_scaling(scaling), head_dim, theta);
  } else if (type == "linear" || type == "yarn") {
    c.metadata.set(prefix + "rope.scaling.type", GgufValue(type));
    c.metadata.set(prefix + "rope.scaling.factor", GgufValue(static_cast<float>(s.real("factor"))));
    if (type == "yarn" && s.has("original_max_position_embeddings"))
      c.metadata.set(prefix + "rope.scaling.original_context_length",
                     GgufValue(s.count("original_max_position_embeddings")));
  } else {
    unsupported("rope_scaling", "rope scaling '" + type + "' for model_type " + c.model_type);
  }
}

}  // namespace

std::string supported_hf_model_types() {
  std::string list;
  for (const HfFamily& family : kFamilies) list += (list.empty() ? "" : ", ") + std::string(family.model_type);
  return list;
}

HfConfig parse_hf_config(std::string_view config_json, const std::string& name) {
  constexpr int kMaxDepth = 32;
  if (json_depth(config_json) > kMaxDepth)
    throw Error(ErrorKind::InvalidValue, "config.json nests deeper than " + std::to_string(kMaxDepth) + " levels");
  const json j = json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(ErrorKind::InvalidValue, "config.json does not parse as JSON");
  if (!j.is_object()) throw Error(ErrorKind::InvalidValue, "config.json is not a JSON object");
  const Fields f(j);
  const HfFamily& family = find_hf_family(f);
  check_layout(f, family);

  HfConfig c;
  c.arch = family.arch;
  c.model_type = family.model_type;
  c.permute_qk = family.permute_qk;
  c.tied_output = f.flag_or("tie_word_embeddings", false);
  c.n_vocab = f.count("vocab_size");
  const uint32_t n_embd = f.count("hidden_size");
  c.n_head = f.count("num_attention_heads");
  c.n_head_kv = f.count_or("num_key_value_heads", c.n_head);
  if (c.n_head % c.n_head_kv != 0) bad("num_key_value_heads", "does not divide num_attention_heads");
  const uint32_t head_dim = f.count_or("head_dim", n_embd / c.n_head);
  if (head_dim == 0 || head_dim % 2 != 0 || head_dim > 65536) bad("head_dim", "must be even, positive and at most 65536");
  // transformers 5 keeps rope_theta (and the scaling) in rope_parameters.
  double theta = family.default_rope_theta;
  if (f.has("rope_parameters")) {
    if (!f.at("rope_parameters").is_object()) bad("rope_parameters", "is not an object");
    theta = Fields(f.at("rope_parameters")).real_or("rope_theta", theta);
  }
  theta = f.real_or("rope_theta", theta);

  GgufMetadata& md = c.metadata;
  const std::string p = c.arch + ".";
  md.set("general.architecture", GgufValue(c.arch));
  md.set("general.name", GgufValue(name));
  md.set(p + "vocab_size", GgufValue(c.n_vocab));
  md.set(p + "context_length", GgufValue(f.count("max_position_embeddings")));
  md.set(p + "embedding_length", GgufValue(n_embd));
  md.set(p + "block_count", GgufValue(f.count("num_hidden_layers")));
  md.set(p + "feed_forward_length", GgufValue(f.count("intermediate_size")));
  md.set(p + "attention.head_count", GgufValue(c.n_head));
  md.set(p + "attention.head_count_kv", GgufValue(c.n_head_kv));
  md.set(p + "rope.freq_base", GgufValue(static_cast<float>(theta)));
  md.set(p + "attention.layer_norm_rms_epsilon", GgufValue(static_cast<float>(f.real("rms_norm_eps"))));
  if (f.has("head_dim")) {
    md.set(p + "attention.key_length", GgufValue(head_dim));
    md.set(p + "attention.value_length", GgufValue(head_dim));
  }
  if (c.arch == "llama") md.set(p + "rope.dimension_count", GgufValue(head_dim));
  if (family.expert_count_key) {
    md.set(p + "expert_count", GgufValue(f.count(family.expert_count_key)));
    md.set(p + "expert_used_count", GgufValue(f.count("num_experts_per_tok")));
    if (family.expert_width_key) md.set(p + "expert_feed_forward_length", GgufValue(f.count("moe_intermediate_size")));
    if (family.shared_expert)
      md.set(p + "expert_shared_feed_forward_length", GgufValue(f.count("shared_expert_intermediate_size")));
  }
  read_rope_scaling(f, c, p, theta, head_dim);

  if (f.has("bos_token_id")) c.bos_id = token_id(f.at("bos_token_id"), "bos_token_id");
  if (f.has("eos_token_id")) {
    const json& eos = f.at("eos_token_id");
    if (eos.is_array()) {
      for (const json& id : eos)
        if (auto v = token_id(id, "eos_token_id")) c.eos_ids.push_back(*v);
    } else if (auto v = token_id(eos, "eos_token_id")) {
      c.eos_ids.push_back(*v);
    }
  }
  return c;
}

}  // namespace synapse
