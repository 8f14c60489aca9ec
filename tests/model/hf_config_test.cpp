// config.json read as llama.cpp's converter reads it: llama.cpp's keys and
// values, transformers' defaults, rope scaling, and typed refusals of what
// the graphs do not build.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "model/hf_tensor_names.h"
#include "model/llama3_rope.h"
#include "synapse/error.h"

namespace synapse {
namespace {

using json = nlohmann::json;

json llama_config() {
  return json{{"model_type", "llama"},   {"hidden_size", 64},        {"intermediate_size", 172},
              {"num_hidden_layers", 5},  {"num_attention_heads", 8}, {"num_key_value_heads", 4},
              {"vocab_size", 512},       {"max_position_embeddings", 512},
              {"rms_norm_eps", 1e-5},    {"rope_theta", 10000.0},    {"tie_word_embeddings", true},
              {"bos_token_id", 1},       {"eos_token_id", 2},        {"hidden_act", "silu"}};
}

ErrorKind error_of(const json& config) {
  try {
    parse_hf_config(config.dump(), "m");
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted " << config.dump();
  return ErrorKind::Io;
}

TEST(HfConfig, LlamaBecomesLlamaCppKeys) {
  const HfConfig c = parse_hf_config(llama_config().dump(), "stories");
  EXPECT_EQ(c.arch, "llama");
  EXPECT_TRUE(c.permute_qk);
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(c.metadata.get_string("general.name"), "stories");
  EXPECT_EQ(c.metadata.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(c.metadata.get_int("llama.feed_forward_length"), 172);
  EXPECT_EQ(c.metadata.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_EQ(c.metadata.get_int("llama.context_length"), 512);
  EXPECT_EQ(c.metadata.get_int("llama.rope.dimension_count"), 8);
  EXPECT_FLOAT_EQ(static_cast<float>(c.metadata.get_double("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_FALSE(c.metadata.contains("llama.attention.key_length"));  // only with head_dim in the config
  EXPECT_EQ(c.bos_id, 1);
  EXPECT_EQ(c.eos_ids, std::vector<int32_t>{2});
}

TEST(HfConfig, MoeFamiliesGetExpertKeys) {
  json q = llama_config();
  q["model_type"] = "qwen2_moe";
  q["num_experts"] = 8;
  q["num_experts_per_tok"] = 2;
  q["moe_intermediate_size"] = 32;
  q["shared_expert_intermediate_size"] = 64;
  q["eos_token_id"] = json::array({2, 7});
  const HfConfig c = parse_hf_config(q.dump(), "m");
  EXPECT_EQ(c.arch, "qwen2moe");
  EXPECT_FALSE(c.permute_qk);
  EXPECT_EQ(c.metadata.get_int("qwen2moe.expert_count"), 8);
  EXPECT_EQ(c.metadata.get_int("qwen2moe.expert_used_count"), 2);
  EXPECT_EQ(c.metadata.get_int("qwen2moe.expert_feed_forward_length"), 32);
  EXPECT_EQ(c.metadata.get_int("qwen2moe.expert_shared_feed_forward_length"), 64);
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{2, 7}));

  json m = llama_config();
  m["model_type"] = "mixtral";
  m["num_local_experts"] = 4;
  m["num_experts_per_tok"] = 2;
  m.erase("rope_theta");
  const HfConfig mixtral = parse_hf_config(m.dump(), "m");
  EXPECT_EQ(mixtral.arch, "llama");
  EXPECT_EQ(mixtral.metadata.get_int("llama.expert_count"), 4);
  EXPECT_EQ(mixtral.metadata.get_double("llama.rope.freq_base"), 1e6);  // MixtralConfig's default
}

TEST(HfConfig, RopeScalingTypes) {
  json y = llama_config();
  y["model_type"] = "qwen2";
  y["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  const HfConfig yarn = parse_hf_config(y.dump(), "m");
  EXPECT_EQ(yarn.metadata.get_string("qwen2.rope.scaling.type"), "yarn");
  EXPECT_EQ(yarn.metadata.get_double("qwen2.rope.scaling.factor"), 4.0);
  EXPECT_EQ(yarn.metadata.get_int("qwen2.rope.scaling.original_context_length"), 32768);

  json l = llama_config();
  l["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  l["rope_theta"] = 500000.0;
  const HfConfig llama3 = parse_hf_config(l.dump(), "m");
  EXPECT_EQ(llama3.rope_freqs, llama3_rope_factors({32, 1, 4, 8192}, 8, 500000.0));
  EXPECT_FALSE(llama3.metadata.contains("llama.rope.scaling.type"));

  json d = llama_config();
  d["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(error_of(d), ErrorKind::Unsupported);
  d["rope_scaling"] = {{"rope_type", "default"}};
  EXPECT_TRUE(parse_hf_config(d.dump(), "m").rope_freqs.empty());
}

// transformers 5 writes rope_theta and the scaling into rope_parameters.
TEST(HfConfig, RopeParametersOfTransformers5AreRead) {
  json c = llama_config();
  c.erase("rope_theta");
  c["rope_parameters"] = {{"rope_theta", 500000.0}, {"rope_type", "llama3"}, {"factor", 32.0},
                          {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                          {"original_max_position_embeddings", 8192}};
  const HfConfig config = parse_hf_config(c.dump(), "m");
  EXPECT_EQ(config.metadata.get_double("llama.rope.freq_base"), 500000.0);
  EXPECT_EQ(config.rope_freqs, llama3_rope_factors({32, 1, 4, 8192}, 8, 500000.0));
}

TEST(HfConfig, DeeplyNestedJsonIsRefusedBeforeItIsParsed) {
  const std::string deep = "{\"model_type\": \"llama\", \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(error_of(json::parse("{}")), ErrorKind::MissingKey);
  try {
    parse_hf_config(deep, "m");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
  }
  json c = llama_config();
  c["partial_rotary_factor"] = json::array({json::array({1})});
  EXPECT_EQ(error_of(c), ErrorKind::InvalidValue);  // named by its type, not dumped
}

TEST(HfConfig, LayoutsTheGraphsDoNotBuildAreUnsupported) {
  const std::vector<std::pair<const char*, json>> cases = {
      {"hidden_act", "gelu"},       {"attention_bias", true},   {"mlp_bias", true},
      {"model_type", "gpt2"},       {"partial_rotary_factor", 0.5},
  };
  for (const auto& [key, value] : cases) {
    json c = llama_config();
    c[key] = value;
    EXPECT_EQ(error_of(c), ErrorKind::Unsupported) << key;
  }
  json o = llama_config();
  o["model_type"] = "olmoe";
  o["num_experts"] = 8;
  o["num_experts_per_tok"] = 2;
  o["norm_topk_prob"] = true;  // OLMoE's gating keeps the softmax weights
  EXPECT_EQ(error_of(o), ErrorKind::Unsupported);
  o["norm_topk_prob"] = false;
  o["clip_qkv"] = 8.0;
  EXPECT_EQ(error_of(o), ErrorKind::Unsupported);
}

TEST(HfConfig, BadValuesAreTypedErrors) {
  EXPECT_EQ(error_of(json::array()), ErrorKind::InvalidValue);
  for (const char* key : {"hidden_size", "num_attention_heads", "vocab_size", "rms_norm_eps"}) {
    json c = llama_config();
    c.erase(key);
    EXPECT_EQ(error_of(c), ErrorKind::MissingKey) << key;
    c[key] = -1;
    EXPECT_EQ(error_of(c), ErrorKind::InvalidValue) << key;
    c[key] = "64";
    EXPECT_EQ(error_of(c), ErrorKind::InvalidValue) << key;
  }
  json c = llama_config();
  c["num_key_value_heads"] = 3;  // does not divide 8
  EXPECT_EQ(error_of(c), ErrorKind::InvalidValue);
  c = llama_config();
  c["eos_token_id"] = "two";
  EXPECT_EQ(error_of(c), ErrorKind::InvalidValue);
  try {
    parse_hf_config("{\"model_type\": ", "m");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
  }
}

// config.json files as published (fields as in the Hugging Face repos),
// with the keys llama.cpp's converter derives from them.
TEST(HfConfig, PublishedConfigsRead) {
  struct Case {
    const char* json;
    const char* arch;
    const char* key;
    double value;
  };
  const Case cases[] = {
      {R"({"architectures":["LlamaForCausalLM"],"attention_bias":false,"attention_dropout":0.0,"bos_token_id":128000,
           "eos_token_id":[128001,128008,128009],"head_dim":64,"hidden_act":"silu","hidden_size":2048,
           "initializer_range":0.02,"intermediate_size":8192,"max_position_embeddings":131072,"mlp_bias":false,
           "model_type":"llama","num_attention_heads":32,"num_hidden_layers":16,"num_key_value_heads":8,
           "pretraining_tp":1,"rms_norm_eps":1e-05,"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,
           "low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},"rope_theta":500000.0,
           "tie_word_embeddings":true,"torch_dtype":"bfloat16","transformers_version":"4.45.0.dev0","use_cache":true,
           "vocab_size":128256})",
       "llama", "llama.attention.key_length", 64},
      {R"({"architectures":["Qwen2ForCausalLM"],"attention_dropout":0.0,"bos_token_id":151643,"eos_token_id":151643,
           "hidden_act":"silu","hidden_size":896,"initializer_range":0.02,"intermediate_size":4864,
           "max_position_embeddings":32768,"max_window_layers":24,"model_type":"qwen2","num_attention_heads":14,
           "num_hidden_layers":24,"num_key_value_heads":2,"rms_norm_eps":1e-06,"rope_theta":1000000.0,
           "sliding_window":32768,"tie_word_embeddings":true,"torch_dtype":"bfloat16","use_cache":true,
           "use_sliding_window":false,"vocab_size":151936,"rope_scaling":null})",
       "qwen2", "qwen2.rope.freq_base", 1e6},
      {R"({"architectures":["Qwen3MoeForCausalLM"],"attention_bias":false,"attention_dropout":0.0,"bos_token_id":151643,
           "decoder_sparse_step":1,"eos_token_id":151645,"head_dim":128,"hidden_act":"silu","hidden_size":2048,
           "initializer_range":0.02,"intermediate_size":6144,"max_position_embeddings":40960,"max_window_layers":48,
           "mlp_only_layers":[],"model_type":"qwen3_moe","moe_intermediate_size":768,"norm_topk_prob":true,
           "num_attention_heads":32,"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,
           "num_key_value_heads":4,"output_router_logits":false,"rms_norm_eps":1e-06,"rope_scaling":null,
           "rope_theta":1000000.0,"router_aux_loss_coef":0.001,"sliding_window":null,"tie_word_embeddings":false,
           "torch_dtype":"bfloat16","use_cache":true,"use_sliding_window":false,"vocab_size":151936})",
       "qwen3moe", "qwen3moe.expert_feed_forward_length", 768},
      {R"({"architectures":["OlmoeForCausalLM"],"attention_bias":false,"attention_dropout":0.0,"clip_qkv":null,
           "eos_token_id":50279,"hidden_act":"silu","hidden_size":2048,"initializer_range":0.02,
           "intermediate_size":1024,"max_position_embeddings":4096,"model_type":"olmoe","norm_topk_prob":false,
           "num_attention_heads":16,"num_experts":64,"num_experts_per_tok":8,"num_hidden_layers":16,
           "num_key_value_heads":16,"output_router_logits":false,"pad_token_id":1,"rms_norm_eps":1e-05,
           "rope_scaling":null,"rope_theta":10000.0,"router_aux_loss_coef":0.01,"tie_word_embeddings":false,
           "torch_dtype":"bfloat16","use_cache":true,"vocab_size":50304})",
       "olmoe", "olmoe.expert_count", 64},
      {R"({"architectures":["MixtralForCausalLM"],"attention_dropout":0.0,"bos_token_id":1,"eos_token_id":2,
           "hidden_act":"silu","hidden_size":4096,"initializer_range":0.02,"intermediate_size":14336,
           "max_position_embeddings":32768,"model_type":"mixtral","num_attention_heads":32,"num_experts_per_tok":2,
           "num_hidden_layers":32,"num_key_value_heads":8,"num_local_experts":8,"output_router_logits":false,
           "rms_norm_eps":1e-05,"rope_theta":1000000.0,"router_aux_loss_coef":0.02,"sliding_window":null,
           "tie_word_embeddings":false,"torch_dtype":"bfloat16","use_cache":true,"vocab_size":32000})",
       "llama", "llama.expert_used_count", 2},
      {R"({"architectures":["Qwen2MoeForCausalLM"],"attention_dropout":0.0,"bos_token_id":151643,
           "decoder_sparse_step":1,"eos_token_id":151643,"hidden_act":"silu","hidden_size":2048,
           "initializer_range":0.02,"intermediate_size":5632,"max_position_embeddings":8192,"max_window_layers":21,
           "model_type":"qwen2_moe","moe_intermediate_size":1408,"norm_topk_prob":false,"num_attention_heads":16,
           "num_experts":60,"num_experts_per_tok":4,"num_hidden_layers":24,"num_key_value_heads":16,
           "output_router_logits":false,"rms_norm_eps":1e-06,"rope_theta":1000000.0,"router_aux_loss_coef":0.001,
           "shared_expert_intermediate_size":5632,"sliding_window":32768,"tie_word_embeddings":false,
           "torch_dtype":"bfloat16","use_cache":true,"use_sliding_window":false,"vocab_size":151936})",
       "qwen2moe", "qwen2moe.expert_shared_feed_forward_length", 5632},
      {R"({"architectures":["MistralForCausalLM"],"attention_dropout":0.0,"bos_token_id":1,"eos_token_id":2,
           "head_dim":128,"hidden_act":"silu","hidden_size":4096,"initializer_range":0.02,"intermediate_size":14336,
           "max_position_embeddings":32768,"model_type":"mistral","num_attention_heads":32,"num_hidden_layers":32,
           "num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_theta":1000000.0,"sliding_window":null,
           "tie_word_embeddings":false,"torch_dtype":"bfloat16","use_cache":true,"vocab_size":32768})",
       "llama", "llama.attention.head_count_kv", 8},
      {R"({"architectures":["LlamaForCausalLM"],"attention_bias":false,"bos_token_id":1,"eos_token_id":2,
           "hidden_act":"silu","hidden_size":2048,"initializer_range":0.02,"intermediate_size":5632,
           "max_position_embeddings":2048,"model_type":"llama","num_attention_heads":32,"num_hidden_layers":22,
           "num_key_value_heads":4,"pretraining_tp":1,"rms_norm_eps":1e-05,"rope_scaling":null,
           "tie_word_embeddings":false,"torch_dtype":"bfloat16","use_cache":true,"vocab_size":32000})",
       "llama", "llama.rope.freq_base", 10000},
  };
  for (const Case& c : cases) {
    const HfConfig config = parse_hf_config(c.json, "m");
    EXPECT_EQ(config.arch, c.arch) << c.json;
    EXPECT_EQ(config.metadata.get_double(c.key), c.value) << c.key;
  }
}

TEST(HfTensorNames, TransformersPathsMapToLlamaCppNames) {
  EXPECT_EQ(gguf_name_of_hf_tensor("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.12.self_attn.k_proj.bias"), "blk.12.attn_k.bias");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.0.mlp.experts.17.down_proj.weight"), "blk.0.ffn_down_exps.weight[17]");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.3.block_sparse_moe.experts.2.w3.weight"), "blk.3.ffn_up_exps.weight[2]");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.3.block_sparse_moe.gate.weight"), "blk.3.ffn_gate_inp.weight");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.1.mlp.shared_expert_gate.weight"), "blk.1.ffn_gate_inp_shexp.weight");
  EXPECT_EQ(gguf_name_of_hf_tensor("model.layers.1.self_attn.rotary_emb.inv_freq"), "");
  for (const char* bad : {"model.layers.01.mlp.up_proj.weight", "model.layers.x.mlp.up_proj.weight",
                          "model.layers.1.mlp.experts.1.w4.weight", "vision_tower.weight", "model.layers.1."})
    EXPECT_EQ(gguf_name_of_hf_tensor(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace synapse
