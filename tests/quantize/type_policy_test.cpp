// llama.cpp's per-tensor type rules (src/llama-quant.cpp) on tensor lists of
// known shapes: categories, what is never quantized, the mixes, the
// fallbacks for rows that are not whole blocks and --tensor-type overrides.
#include "quantize/type_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "quantize/quant_types.h"
#include "quantize/tensor_category.h"
#include "synapse/error.h"

namespace synapse::quant {
namespace {

struct Tensor {
  std::string name;
  std::vector<uint64_t> dims;
};

// A llama-shaped model: n_layer blocks of the given widths, tied unless asked.
std::vector<Tensor> llama_tensors(int n_layer, uint64_t embd, uint64_t kv, uint64_t ff, bool tied) {
  std::vector<Tensor> t = {{"token_embd.weight", {embd, 512}}, {"output_norm.weight", {embd}}};
  if (!tied) t.push_back({"output.weight", {embd, 512}});
  for (int i = 0; i < n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    t.push_back({b + "attn_norm.weight", {embd}});
    t.push_back({b + "attn_q.weight", {embd, embd}});
    t.push_back({b + "attn_k.weight", {embd, kv}});
    t.push_back({b + "attn_v.weight", {embd, kv}});
    t.push_back({b + "attn_output.weight", {embd, embd}});
    t.push_back({b + "ffn_norm.weight", {embd}});
    t.push_back({b + "ffn_gate.weight", {embd, ff}});
    t.push_back({b + "ffn_down.weight", {ff, embd}});
    t.push_back({b + "ffn_up.weight", {embd, ff}});
  }
  return t;
}

std::map<std::string, Encoding> types_of(const std::string& type, const std::vector<Tensor>& tensors,
                                         const ModelFacts& facts, bool pure = false, bool has_imatrix = false) {
  const QuantType* t = find_quant_type(type);
  EXPECT_NE(t, nullptr) << type;
  std::vector<TensorToType> requests;
  for (const Tensor& x : tensors) requests.push_back({x.name, x.dims, Encoding::F32});
  const std::vector<Encoding> e = choose_encodings(*t, facts, requests, pure, has_imatrix);
  std::map<std::string, Encoding> out;
  for (size_t i = 0; i < tensors.size(); ++i) out[tensors[i].name] = e[i];
  return out;
}

ModelFacts llama_facts(uint32_t n_layer) { return {"llama", n_layer, 0, 8, 4}; }

// choose_types with overrides parsed from `items`: each tensor's encoding,
// and "!" appended to the names an override chose.
std::map<std::string, Encoding> overridden_types(const std::string& type, const std::vector<Tensor>& tensors,
                                                 const std::vector<std::string>& items, bool pure = false) {
  std::vector<TensorTypeOverride> overrides;
  for (const std::string& item : items) overrides.push_back(parse_tensor_type(item));
  std::vector<TensorToType> requests;
  for (const Tensor& x : tensors) requests.push_back({x.name, x.dims, Encoding::F32});
  const std::vector<TypeChoice> c =
      choose_types(*find_quant_type(type), llama_facts(8), requests, pure, false, overrides);
  std::map<std::string, Encoding> out;
  for (size_t i = 0; i < tensors.size(); ++i) out[tensors[i].name + (c[i].override ? "!" : "")] = c[i].encoding;
  return out;
}

TEST(QuantTypes, NamesAreCaseInsensitiveWithLlamaCppAliases) {
  ASSERT_NE(find_quant_type("Q4_K_M"), nullptr);
  EXPECT_EQ(find_quant_type("Q4_K_M")->file_type, 15u);
  EXPECT_EQ(find_quant_type("q4_k_s"), find_quant_type("q4_k"));
  EXPECT_EQ(find_quant_type("Q5_K_S")->file_type, 16u);
  EXPECT_EQ(find_quant_type("q5_k_m")->file_type, 17u);
  EXPECT_EQ(find_quant_type("q5_k_m")->base, Encoding::Q5_K);
  EXPECT_EQ(find_quant_type("BF16")->file_type, 32u);
  EXPECT_EQ(find_quant_type("q3_k"), nullptr);
  EXPECT_EQ(find_quant_type(""), nullptr);
}

TEST(TensorCategory, FollowsLlamaCppsNameRules) {
  EXPECT_EQ(tensor_category("output.weight"), TensorCategory::Output);
  EXPECT_EQ(tensor_category("token_embd.weight"), TensorCategory::TokenEmbd);
  EXPECT_EQ(tensor_category("blk.3.attn_v.weight"), TensorCategory::AttnV);
  EXPECT_EQ(tensor_category("blk.3.attn_qkv.weight"), TensorCategory::AttnQkv);
  EXPECT_EQ(tensor_category("blk.3.ffn_down_exps.weight"), TensorCategory::FfnDown);
  EXPECT_EQ(tensor_category("blk.3.ffn_gate_inp.weight"), TensorCategory::FfnGate);
  EXPECT_EQ(tensor_category("blk.3.attn_norm.weight"), TensorCategory::Other);
  EXPECT_EQ(block_index("blk.12.attn_q.weight"), 12);
  EXPECT_EQ(block_index("output.weight"), -1);
}

TEST(TensorCategory, NormsRoutersAndOneDimensionalTensorsAreNeverQuantized) {
  const std::vector<uint64_t> matrix = {64, 64}, vector = {64}, column = {64, 1, 1};
  EXPECT_TRUE(allows_quantization("blk.0.attn_q.weight", matrix));
  EXPECT_TRUE(allows_quantization("blk.0.ffn_up_exps.weight", std::vector<uint64_t>{64, 64, 4}));
  EXPECT_FALSE(allows_quantization("blk.0.attn_q.weight", column));  // 1-D once trailing ones go
  EXPECT_FALSE(allows_quantization("blk.0.attn_q.bias", matrix));    // not a weight
  EXPECT_FALSE(allows_quantization("blk.0.attn_norm.weight", vector));
  EXPECT_FALSE(allows_quantization("blk.0.attn_q_norm.weight", matrix));
  EXPECT_FALSE(allows_quantization("blk.0.ffn_gate_inp.weight", matrix));
  EXPECT_FALSE(allows_quantization("position_embd.weight", matrix));
  EXPECT_FALSE(allows_quantization("blk.0.ssm_conv1d.weight", matrix));
}

// stories260K: embd 64 (not a multiple of 256), ff 172 (not even of 32),
// tied embeddings, 5 blocks.
TEST(TypePolicy, Stories260KShapesFallBackAsLlamaCppDoes) {
  const auto tensors = llama_tensors(5, 64, 32, 172, true);
  const ModelFacts facts = llama_facts(5);
  const auto q4k = types_of("q4_k", tensors, facts);
  EXPECT_EQ(q4k.at("token_embd.weight"), Encoding::Q8_0);  // output rule: 64 % 256 -> q8_0
  EXPECT_EQ(q4k.at("blk.0.attn_q.weight"), Encoding::Q5_0);
  EXPECT_EQ(q4k.at("blk.0.attn_v.weight"), Encoding::Q5_1);  // q5_K in the first 4 layers
  EXPECT_EQ(q4k.at("blk.4.attn_v.weight"), Encoding::Q5_0);
  EXPECT_EQ(q4k.at("blk.0.ffn_down.weight"), Encoding::F16);  // 172 % 32
  EXPECT_EQ(q4k.at("output_norm.weight"), Encoding::F32);
  const auto q8 = types_of("q8_0", tensors, facts);
  EXPECT_EQ(q8.at("token_embd.weight"), Encoding::Q8_0);
  EXPECT_EQ(q8.at("blk.2.ffn_up.weight"), Encoding::Q8_0);
  EXPECT_EQ(q8.at("blk.2.ffn_down.weight"), Encoding::F16);
  const auto q4 = types_of("q4_0", tensors, facts);
  EXPECT_EQ(q4.at("token_embd.weight"), Encoding::Q8_0);  // q6_K, which does not fit: q8_0
  EXPECT_EQ(q4.at("blk.1.attn_k.weight"), Encoding::Q4_0);
  const auto f16 = types_of("f16", tensors, facts);
  EXPECT_EQ(f16.at("blk.1.ffn_down.weight"), Encoding::F16);
  EXPECT_EQ(f16.at("blk.1.ffn_norm.weight"), Encoding::F32);
}

TEST(TypePolicy, KMixesGiveMoreBitsToTheLayersLlamaCppDoes) {
  const auto tensors = llama_tensors(8, 256, 256, 512, false);
  const auto m4 = types_of("q4_k_m", tensors, llama_facts(8));
  const auto m5 = types_of("q5_k_m", tensors, llama_facts(8));
  const auto s4 = types_of("q4_k", tensors, llama_facts(8));
  for (int i = 0; i < 8; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    const bool more = i == 0 || i == 3 || i == 6 || i == 7;
    EXPECT_EQ(m4.at(b + "attn_v.weight"), more ? Encoding::Q6_K : Encoding::Q4_K) << i;
    EXPECT_EQ(m4.at(b + "ffn_down.weight"), more ? Encoding::Q6_K : Encoding::Q4_K) << i;
    EXPECT_EQ(m5.at(b + "attn_v.weight"), more ? Encoding::Q6_K : Encoding::Q5_K) << i;
    EXPECT_EQ(m5.at(b + "ffn_down.weight"), more ? Encoding::Q6_K : Encoding::Q5_K) << i;
    EXPECT_EQ(m5.at(b + "attn_q.weight"), Encoding::Q5_K) << i;
    EXPECT_EQ(s4.at(b + "attn_v.weight"), i < 4 ? Encoding::Q5_K : Encoding::Q4_K) << i;
    EXPECT_EQ(s4.at(b + "ffn_down.weight"), i < 1 ? Encoding::Q5_K : Encoding::Q4_K) << i;
  }
  EXPECT_EQ(m4.at("output.weight"), Encoding::Q6_K);
  EXPECT_EQ(m4.at("token_embd.weight"), Encoding::Q4_K);  // untied: an ordinary weight
  const auto pure = types_of("q4_k_m", tensors, llama_facts(8), true);
  EXPECT_EQ(pure.at("output.weight"), Encoding::Q4_K);
  EXPECT_EQ(pure.at("blk.0.attn_v.weight"), Encoding::Q4_K);
}

TEST(TypePolicy, EightExpertsAndSeventyBillionTweaks) {
  const auto tensors = llama_tensors(2, 256, 256, 512, false);
  ModelFacts mixtral = llama_facts(2);
  mixtral.n_expert = 8;
  const auto e8 = types_of("q4_k_m", tensors, mixtral);
  EXPECT_EQ(e8.at("blk.1.attn_v.weight"), Encoding::Q8_0);
  EXPECT_EQ(e8.at("blk.1.attn_k.weight"), Encoding::Q8_0);
  EXPECT_EQ(e8.at("blk.1.attn_output.weight"), Encoding::Q5_K);

  const auto big = llama_tensors(80, 256, 256, 512, false);
  const auto t70 = types_of("q4_k_m", big, llama_facts(80));
  // Block 11 of 80 gets no extra bits from the mix: q4_K, raised to q5_K.
  EXPECT_EQ(t70.at("blk.11.attn_v.weight"), Encoding::Q5_K);
  ModelFacts mha = llama_facts(80);
  mha.n_head_kv = mha.n_head;  // LLaMA 65B: not the 70B rule
  EXPECT_EQ(types_of("q4_k_m", big, mha).at("blk.11.attn_v.weight"), Encoding::Q4_K);
}

TEST(TypePolicy, ExpertFfnTensorsTakeTheirBlockFromTheName) {
  std::vector<Tensor> tensors = {{"token_embd.weight", {256, 512}},
                                 {"blk.0.ffn_down_exps.weight", {256, 256, 4}},
                                 {"ffn_down_exps.weight", {256, 256, 4}}};
  ModelFacts moe = {"qwen3moe", 8, 4, 8, 4};
  EXPECT_THROW(types_of("q4_k_m", tensors, moe), Error);
  tensors.pop_back();
  EXPECT_EQ(types_of("q4_k_m", tensors, moe).at("blk.0.ffn_down_exps.weight"), Encoding::Q6_K);
}

// llama.cpp's one rule for these types that an imatrix changes: q4_0 and
// q5_0 give ffn_down of the first eighth of the layers q4_1 / q5_1 (not
// under --pure, and row fallbacks still apply).
TEST(TypePolicy, WithAnImatrixQ4_0AndQ5_0GiveTheFirstFfnDownsMoreBits) {
  const auto tensors = llama_tensors(16, 256, 128, 512, false);
  for (const auto& [type, base, more] : {std::tuple{"q4_0", Encoding::Q4_0, Encoding::Q4_1},
                                         std::tuple{"q5_0", Encoding::Q5_0, Encoding::Q5_1}}) {
    const auto with = types_of(type, tensors, llama_facts(16), false, true);
    EXPECT_EQ(with.at("blk.0.ffn_down.weight"), more) << type;
    EXPECT_EQ(with.at("blk.1.ffn_down.weight"), more) << type;
    EXPECT_EQ(with.at("blk.2.ffn_down.weight"), base) << type;
    EXPECT_EQ(with.at("blk.0.ffn_up.weight"), base) << type;
    EXPECT_EQ(types_of(type, tensors, llama_facts(16)).at("blk.0.ffn_down.weight"), base) << type;
    EXPECT_EQ(types_of(type, tensors, llama_facts(16), true, true).at("blk.0.ffn_down.weight"), base) << type;
  }
  // q8_0 and the K-quant mixes have no imatrix rule.
  EXPECT_EQ(types_of("q8_0", tensors, llama_facts(16), false, true), types_of("q8_0", tensors, llama_facts(16)));
  EXPECT_EQ(types_of("q4_k_m", tensors, llama_facts(16), false, true),
            types_of("q4_k_m", tensors, llama_facts(16)));
}

// An override replaces the mix's choice for the quantizable weights its
// pattern is found in (first match), and the row fallback still applies.
TEST(TypeOverrides, OverriddenWeightsGetTheTypeWithLlamaCppsRowFallback) {
  const auto t = overridden_types("q4_k_m", llama_tensors(8, 256, 128, 512, false),
                                  {"attn_q=q8_0", "blk\\.2\\.=q4_0", "attn=q5_k", "norm=q8_0"});
  EXPECT_EQ(t.at("blk.2.attn_q.weight!"), Encoding::Q8_0);  // the first match wins
  EXPECT_EQ(t.at("blk.2.attn_k.weight!"), Encoding::Q4_0);
  EXPECT_EQ(t.at("blk.3.attn_k.weight!"), Encoding::Q5_K);
  EXPECT_EQ(t.at("blk.3.attn_norm.weight"), Encoding::F32);  // never quantized: no override either
  EXPECT_EQ(t.at("blk.3.ffn_up.weight"), Encoding::Q4_K);
  EXPECT_EQ(t.at("output.weight"), Encoding::Q6_K);

  // stories260K's shapes: rows of 64 take no K-quant (q5_0, q8_0 instead);
  // rows of 172 no 32-element block either (f16).
  const auto s = overridden_types("q8_0", llama_tensors(8, 64, 32, 172, true),
                                  {"attn_q=q4_k", "attn_k=q6_k", "ffn_down=q4_0", "ffn_up=q8_0", "token_embd=bf16"});
  EXPECT_EQ(s.at("blk.0.attn_q.weight!"), Encoding::Q5_0);
  EXPECT_EQ(s.at("blk.0.attn_k.weight!"), Encoding::Q8_0);
  EXPECT_EQ(s.at("blk.0.ffn_down.weight!"), Encoding::F16);
  EXPECT_EQ(s.at("blk.0.ffn_up.weight!"), Encoding::Q8_0);
  EXPECT_EQ(s.at("token_embd.weight!"), Encoding::BF16);  // also over the output rule of a tied embedding
}

// llama.cpp counts attn_v and ffn_down layers inside its mix, which an
// overridden tensor skips: the layers after it get the choices meant for
// the layer before (q4_k_m: more bits in layers 0, 3, 6, 7 of 8 becomes
// 1, 4, 7 once layer 0 is overridden).
TEST(TypeOverrides, AnOverriddenLayerDoesNotAdvanceTheMixCounters) {
  const auto t = overridden_types("q4_k_m", llama_tensors(8, 256, 128, 512, false),
                                  {"blk\\.0\\.attn_v=q4_0", "blk\\.0\\.ffn_down=q4_0"});
  for (int i = 1; i < 8; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    const bool more = i == 1 || i == 4 || i == 7;
    EXPECT_EQ(t.at(b + "attn_v.weight"), more ? Encoding::Q6_K : Encoding::Q4_K) << i;
    EXPECT_EQ(t.at(b + "ffn_down.weight"), more ? Encoding::Q6_K : Encoding::Q4_K) << i;
  }
}

TEST(TypeOverrides, ApplyUnderPureAndNotToUnquantizedFileTypes) {
  const auto tensors = llama_tensors(8, 256, 128, 512, false);
  const auto pure = overridden_types("q4_0", tensors, {"attn_v=q8_0"}, true);
  EXPECT_EQ(pure.at("blk.0.attn_v.weight!"), Encoding::Q8_0);
  EXPECT_EQ(pure.at("blk.0.attn_q.weight"), Encoding::Q4_0);
  EXPECT_EQ(pure.at("output.weight"), Encoding::Q4_0);
  for (const char* type : {"f16", "bf16", "f32"}) {
    const auto plain = overridden_types(type, tensors, {"attn_v=q8_0"});
    EXPECT_EQ(plain.count("blk.0.attn_v.weight!"), 0u) << type;
    EXPECT_EQ(plain.at("blk.0.attn_v.weight"), find_quant_type(type)->base) << type;
  }
}

}  // namespace
}  // namespace synapse::quant
