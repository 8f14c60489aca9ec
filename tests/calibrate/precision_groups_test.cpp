// Precision groups: a dense model's groups are the embedding and each
// layer's attention and MLP with their quantizable matrices (norms and
// routers are not); an MoE layer's experts are one group of merged
// tensors. with_encoding re-encodes exactly a group's tensors, row for row
// as quantize_row writes them (with llama.cpp's fallback for short rows),
// and the model still runs.
#include <gtest/gtest.h>

#include <vector>

#include "exec/session.h"
#include "model/model.h"
#include "calibrate/precision_groups.h"
#include "quantize/type_policy.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::calibrate {
namespace {

std::string synth_model_file(const test::TempDir& dir, const std::string& arch) {
  SynthOptions options;
  options.arch = arch;
  const std::string path = dir.file(arch + ".gguf");
  synth_model(options, path);
  return path;
}

const PrecisionGroup& group_named(const std::vector<PrecisionGroup>& groups, const std::string& name) {
  for (const PrecisionGroup& g : groups)
    if (g.name == name) return g;
  throw Error(ErrorKind::InvalidValue, "no group " + name);
}

TEST(PrecisionGroups, DenseLayersGiveAttentionAndMlpGroupsOfTheirMatrices) {
  const test::TempDir dir;
  const Model model = load_model(synth_model_file(dir, "llama"));
  const std::vector<PrecisionGroup> groups = precision_groups(model.graph);
  ASSERT_EQ(groups.size(), 1u + 2u * 2u);  // tied embedding; two layers
  EXPECT_EQ(groups[0].name, "Embedding");
  EXPECT_EQ(groups[0].tensors, std::vector<std::string>{"token_embd.weight"});
  const PrecisionGroup& attention = group_named(groups, "Attention(1)");
  EXPECT_EQ(attention.tensors.size(), 4u);  // q, k, v, output: not attn_norm
  for (const std::string& t : attention.tensors) EXPECT_EQ(t.rfind("blk.1.attn_", 0), 0u) << t;
  EXPECT_EQ(group_named(groups, "Mlp(0)").tensors.size(), 3u);
}

TEST(PrecisionGroups, ExpertsOfALayerAreOneGroupOfMergedTensors) {
  const test::TempDir dir;
  const Model model = load_model(synth_model_file(dir, "olmoe"));
  const std::vector<PrecisionGroup> groups = precision_groups(model.graph);
  const PrecisionGroup& experts = group_named(groups, "Experts(0)");
  EXPECT_EQ(experts.tensors, (std::vector<std::string>{"blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight",
                                                        "blk.0.ffn_down_exps.weight"}));
  for (const PrecisionGroup& g : groups)
    for (const std::string& t : g.tensors) EXPECT_EQ(t.find("ffn_gate_inp"), std::string::npos) << g.name;
}

TEST(PrecisionGroups, WithEncodingReencodesExactlyTheGroupAndStillRuns) {
  const test::TempDir dir;
  const Model model = load_model(synth_model_file(dir, "olmoe"));
  const std::vector<PrecisionGroup> groups = precision_groups(model.graph);
  const PrecisionGroup& experts = group_named(groups, "Experts(1)");
  uint64_t bytes = 0;
  const Model q4 = with_encoding(model, experts.tensors, Encoding::Q4_0, dir.file("scratch.bin"), &bytes);
  EXPECT_EQ(bytes * 128, stored_bytes(model, experts.tensors) * 18);  // f32 -> 18 bytes per 32 elements
  EXPECT_EQ(stored_bytes(q4, experts.tensors), bytes);
  std::vector<float> row, want;
  for (uint32_t i = 0; i < model.graph.weights.size(); ++i) {
    const ir::WeightDescriptor& before = model.graph.weights[i];
    const ir::WeightDescriptor& after = q4.graph.weights[i];
    const bool in_group = before.name.rfind("blk.1.ffn_", 0) == 0 && before.name.find("_exps") != std::string::npos;
    EXPECT_EQ(after.encoding, in_group && before.shape.size() == 2 ? Encoding::Q4_0 : before.encoding) << before.name;
    if (after.encoding != Encoding::Q4_0) continue;
    // Row 0 is quantize_row of the original row.
    const auto cols = before.shape[1];
    row.resize(static_cast<size_t>(cols));
    dequantize_row(before.encoding, model.weight_bytes(ir::TensorId{i}).data(), row.data(), cols);
    std::vector<uint8_t> encoded(row_bytes(Encoding::Q4_0, static_cast<uint64_t>(cols)));
    quantize_row(Encoding::Q4_0, row.data(), encoded.data(), cols);
    EXPECT_TRUE(std::equal(encoded.begin(), encoded.end(), q4.weight_bytes(ir::TensorId{i}).begin())) << before.name;
  }
  exec::Session session(q4);
  const std::vector<int32_t> tokens = {1, 2, 3};
  const std::span<const float> logits = session.eval(tokens);
  EXPECT_FALSE(logits.empty());
  EXPECT_THROW(with_encoding(model, std::vector<std::string>{"nope.weight"}, Encoding::Q4_0, dir.file("s2.bin"), &bytes),
               Error);
}

TEST(PrecisionGroups, RegionItemsBecomeTheirTensorsByExactNameInTheirPlace) {
  const test::TempDir dir;
  const Model model = load_model(synth_model_file(dir, "llama"));
  const std::vector<quant::TensorTypeOverride> items = {
      quant::parse_tensor_type("attn_v=q6_K"), quant::parse_tensor_type("region:Attention(*)=q8_0"),
      quant::parse_tensor_type("region:mlp(1)=q4_0")};
  const std::vector<quant::TensorTypeOverride> out = expand_region_overrides(items, model.graph);
  ASSERT_EQ(out.size(), 1u + 2u * 4u + 3u);
  EXPECT_EQ(out[0].pattern, "attn_v");  // a plain pattern stays, first
  EXPECT_EQ(out[1].pattern, "^blk\\.0\\.attn_q\\.weight$");
  for (size_t i = 1; i < 9; ++i) EXPECT_EQ(out[i].type, Encoding::Q8_0) << out[i].pattern;
  for (size_t i = 9; i < out.size(); ++i) {
    EXPECT_EQ(out[i].type, Encoding::Q4_0);
    EXPECT_EQ(out[i].pattern.rfind("^blk\\.1\\.ffn_", 0), 0u) << out[i].pattern;
  }
  EXPECT_NE(quant::find_override(out, "blk.1.attn_output.weight"), nullptr);
  EXPECT_EQ(quant::find_override(out, "blk.1.attn_output.weight")->type, Encoding::Q8_0);
  for (const char* bad : {"region:Attention(2)=q8_0", "region:Experts(0)=q8_0", "region:nothing=q8_0"}) {
    const std::vector<quant::TensorTypeOverride> one = {quant::parse_tensor_type(bad)};
    EXPECT_THROW(expand_region_overrides(one, model.graph), Error) << bad;
  }
}

TEST(PrecisionGroups, ShortRowsGetLlamaCppsFallback) {
  EXPECT_EQ(quant::fit_row(Encoding::Q4_K, 512), Encoding::Q4_K);
  EXPECT_EQ(quant::fit_row(Encoding::Q4_K, 64), Encoding::Q5_0);
  EXPECT_EQ(quant::fit_row(Encoding::Q6_K, 64), Encoding::Q8_0);
  EXPECT_EQ(quant::fit_row(Encoding::Q4_0, 40), Encoding::F16);
}

}  // namespace
}  // namespace synapse::calibrate
