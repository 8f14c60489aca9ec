#include "support/hf_folder_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <vector>

#include "format/gguf_reader.h"
#include "format/safetensors.h"
#include "synth/synth_weights.h"

namespace synapse::test {
namespace {

using json = nlohmann::json;

struct Family {
  const char* model_type;
  bool permute_qk;
  bool mixtral_names;  // block_sparse_moe.experts.E.w1/w3/w2
};

Family family_of(const GgufMetadata& md) {
  const std::string arch = md.get_string("general.architecture");
  if (arch == "llama") return md.contains("llama.expert_count") ? Family{"mixtral", true, true} : Family{"llama", true, false};
  if (arch == "qwen2moe") return {"qwen2_moe", false, false};
  if (arch == "qwen3moe") return {"qwen3_moe", false, false};
  return {arch == "qwen2" ? "qwen2" : arch == "qwen3" ? "qwen3" : "olmoe", false, false};
}

json config_of(const GgufMetadata& md, const Family& family, const GgufFile& file) {
  const std::string a = md.get_string("general.architecture") + ".";
  auto u = [&](const std::string& key) { return md.get_int(a + key); };
  json c;
  c["architectures"] = json::array({"ForCausalLM"});
  c["model_type"] = family.model_type;
  c["hidden_size"] = u("embedding_length");
  c["num_hidden_layers"] = u("block_count");
  c["num_attention_heads"] = u("attention.head_count");
  c["num_key_value_heads"] = u("attention.head_count_kv");
  c["max_position_embeddings"] = u("context_length");
  c["rms_norm_eps"] = md.get_double(a + "attention.layer_norm_rms_epsilon");
  c["rope_theta"] = md.get_double(a + "rope.freq_base");
  c["vocab_size"] = u("vocab_size");
  c["hidden_act"] = "silu";
  if (md.contains(a + "attention.key_length")) c["head_dim"] = u("attention.key_length");
  bool tied = true;
  for (const GgufTensorInfo& t : file.tensors()) {
    tied = tied && t.name != "output.weight";
    // HF states the factors synth wrote as rope_freqs.weight by their scaling.
    if (t.name == "rope_freqs.weight")
      c["rope_scaling"] = {{"rope_type", "llama3"},
                           {"factor", synth::kLlama3Rope.factor},
                           {"low_freq_factor", synth::kLlama3Rope.low_freq_factor},
                           {"high_freq_factor", synth::kLlama3Rope.high_freq_factor},
                           {"original_max_position_embeddings", synth::kLlama3Rope.original_context}};
  }
  c["tie_word_embeddings"] = tied;
  const int64_t ff = u("feed_forward_length");
  c["intermediate_size"] = ff;
  if (md.contains(a + "expert_count")) {
    c[std::string(family.model_type) == "mixtral" ? "num_local_experts" : "num_experts"] = u("expert_count");
    c["num_experts_per_tok"] = u("expert_used_count");
    if (md.contains(a + "expert_feed_forward_length")) c["moe_intermediate_size"] = u("expert_feed_forward_length");
    if (md.contains(a + "expert_shared_feed_forward_length"))
      c["shared_expert_intermediate_size"] = u("expert_shared_feed_forward_length");
    // Mixtral and OLMoE name the expert width intermediate_size.
    const std::string type = family.model_type;
    if ((type == "mixtral" || type == "olmoe") && md.contains(a + "expert_feed_forward_length"))
      c["intermediate_size"] = u("expert_feed_forward_length");
  }
  return c;
}

// transformers' module path of a GGUF tensor ("" for one HF does not store).
std::string hf_name(const std::string& gguf, const Family& family, int expert = -1) {
  static const std::map<std::string, std::string> whole = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
  };
  if (auto it = whole.find(gguf); it != whole.end()) return it->second;
  static const std::map<std::string, std::string> in_layer = {
      {"attn_norm.weight", "input_layernorm.weight"},   {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},     {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.weight", "self_attn.k_proj.weight"},     {"attn_k.bias", "self_attn.k_proj.bias"},
      {"attn_v.weight", "self_attn.v_proj.weight"},     {"attn_v.bias", "self_attn.v_proj.bias"},
      {"attn_output.weight", "self_attn.o_proj.weight"}, {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"}, {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},          {"ffn_down.weight", "mlp.down_proj.weight"},
      {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight"},
      {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight"},
      {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight"},
      {"ffn_gate_inp_shexp.weight", "mlp.shared_expert_gate.weight"},
  };
  static const std::regex block(R"(blk\.(\d+)\.(.+))");
  std::smatch m;
  if (!std::regex_match(gguf, m, block)) throw std::runtime_error("no HF name for " + gguf);
  const std::string layer = "model.layers." + m[1].str() + ".", rest = m[2].str();
  if (auto it = in_layer.find(rest); it != in_layer.end()) return layer + it->second;
  const std::string moe = family.mixtral_names ? "block_sparse_moe." : "mlp.";
  if (rest == "ffn_gate_inp.weight") return layer + moe + "gate.weight";
  const std::string e = moe + "experts." + std::to_string(expert) + ".";
  if (family.mixtral_names) {
    if (rest == "ffn_gate_exps.weight") return layer + e + "w1.weight";
    if (rest == "ffn_up_exps.weight") return layer + e + "w3.weight";
    if (rest == "ffn_down_exps.weight") return layer + e + "w2.weight";
  }
  if (rest == "ffn_gate_exps.weight") return layer + e + "gate_proj.weight";
  if (rest == "ffn_up_exps.weight") return layer + e + "up_proj.weight";
  if (rest == "ffn_down_exps.weight") return layer + e + "down_proj.weight";
  throw std::runtime_error("no HF name for " + gguf);
}

const char* dtype_of(Encoding e) {
  switch (e) {
    case Encoding::F32: return "F32";
    case Encoding::F16: return "F16";
    case Encoding::BF16: return "BF16";
    default: throw std::runtime_error("write_hf_folder takes F32, F16 or BF16 files");
  }
}

// GGUF row r (interleaved rotary pairs) is HF row hf_row(r) (rotate-half).
uint64_t hf_row(uint64_t r, uint64_t head_rows) {
  const uint64_t head = r / head_rows, within = r % head_rows, half = head_rows / 2;
  return head * head_rows + (within % 2) * half + within / 2;
}

struct Pending {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

}  // namespace

void write_hf_folder(const std::string& gguf, const std::string& folder, const HfFolderOptions& options) {
  const GgufFile file = GgufFile::open(gguf);
  const GgufMetadata& md = file.metadata();
  const Family family = family_of(md);
  const std::string a = md.get_string("general.architecture") + ".";
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/config.json") << config_of(md, family, file).dump(2);

  std::vector<Pending> tensors;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (t.name == "rope_freqs.weight") continue;  // config.json's rope_scaling
    const auto data = file.tensor_data(t);
    std::vector<uint64_t> shape(t.dims.rbegin(), t.dims.rend());
    const bool q = t.name.ends_with("attn_q.weight"), k = t.name.ends_with("attn_k.weight");
    if (family.permute_qk && (q || k)) {
      const uint64_t heads = static_cast<uint64_t>(md.get_int(a + (q ? "attention.head_count" : "attention.head_count_kv")));
      const uint64_t rows = shape[0], row_bytes = data.size() / rows;
      std::vector<uint8_t> out(data.size());
      for (uint64_t r = 0; r < rows; ++r)
        std::memcpy(out.data() + hf_row(r, rows / heads) * row_bytes, data.data() + r * row_bytes, row_bytes);
      tensors.push_back({hf_name(t.name, family), dtype_of(t.encoding), shape, std::move(out)});
    } else if (shape.size() == 3) {  // merged experts: one tensor each
      const uint64_t slice = data.size() / shape[0];
      for (uint64_t e = 0; e < shape[0]; ++e)
        tensors.push_back({hf_name(t.name, family, static_cast<int>(e)), dtype_of(t.encoding), {shape[1], shape[2]},
                           std::vector<uint8_t>(data.begin() + e * slice, data.begin() + (e + 1) * slice)});
    } else {
      if (t.name.ends_with("ffn_gate_inp_shexp.weight")) shape.insert(shape.begin(), 1);
      tensors.push_back({hf_name(t.name, family), dtype_of(t.encoding), shape, {data.begin(), data.end()}});
    }
  }

  const int shards = std::max(1, options.shards);
  json weight_map = json::object();
  for (int s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
    const std::string file_name = shards == 1 ? "model.safetensors" : name;
    std::vector<SafetensorsEntry> entries;
    for (size_t i = static_cast<size_t>(s); i < tensors.size(); i += static_cast<size_t>(shards)) {
      entries.push_back({tensors[i].name, tensors[i].dtype, tensors[i].shape, tensors[i].bytes});
      weight_map[tensors[i].name] = file_name;
    }
    write_safetensors(folder + "/" + file_name, entries, {{"format", "pt"}});
  }
  if (shards > 1) std::ofstream(folder + "/model.safetensors.index.json") << json{{"weight_map", weight_map}}.dump(2);
}

}  // namespace synapse::test
