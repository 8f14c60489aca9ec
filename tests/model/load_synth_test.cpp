// Tiny synthetic llama, qwen2 and qwen3 files (llama.cpp's names and keys)
// load into verified graphs with each family's features.
#include <gtest/gtest.h>

#include "ir/verify.h"
#include "model/model.h"
#include "model/model_test_files.h"
#include "support/temp_dir.h"
#include "synth/synth.h"

namespace synapse {
namespace {

Model load_synth(const std::string& arch, const test::TempDir& dir) {
  const std::string path = dir.file(arch + ".gguf");
  SynthOptions options;
  options.arch = arch;
  options.preset = "tiny";
  options.type = "f32";
  options.seed = 7;
  synth_model(options, path);
  return load_model(path);
}

template <class Op>
std::vector<Op> ops_of(const ir::Graph& graph) {
  std::vector<Op> out;
  for (const ir::Node& n : graph.nodes)
    if (const auto* op = std::get_if<Op>(&n.op)) out.push_back(*op);
  return out;
}

size_t biased_matmuls(const ir::Graph& graph) {
  size_t n = 0;
  for (const auto& m : ops_of<ir::MatMul>(graph)) n += m.bias.has_value();
  return n;
}

TEST(ModelSynth, TinyLlamaLoads) {
  test::TempDir dir;
  const Model model = load_synth("llama", dir);
  EXPECT_EQ(model.info.architecture, "llama");
  EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(model.info.n_layer));
  EXPECT_NO_THROW(ir::verify(model.graph));
  EXPECT_EQ(biased_matmuls(model.graph), 0u);
  for (const auto& rope : ops_of<ir::Rope>(model.graph)) EXPECT_EQ(rope.layout, ir::RopeLayout::Normal);
}

TEST(ModelSynth, TinyQwen2HasBiasesAndNeoxRope) {
  test::TempDir dir;
  const Model model = load_synth("qwen2", dir);
  EXPECT_EQ(model.info.architecture, "qwen2");
  EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(model.info.n_layer));
  EXPECT_EQ(biased_matmuls(model.graph), 3u * model.info.n_layer);  // q, k, v
  for (const auto& rope : ops_of<ir::Rope>(model.graph)) EXPECT_EQ(rope.layout, ir::RopeLayout::NeoX);
}

// The builder emits RmsNorm(q, attn_q_norm [head_dim]) on q [T, heads *
// head_dim], one normalisation per head, and the IR accepts it (a
// verifier rejection fails the test).
TEST(ModelSynth, TinyQwen3NormalizesQAndKPerHead) {
  test::TempDir dir;
  const Model model = load_synth("qwen3", dir);
  EXPECT_EQ(model.info.architecture, "qwen3");
  EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(model.info.n_layer));
  EXPECT_EQ(biased_matmuls(model.graph), 0u);
  // attn_norm, ffn_norm, q_norm, k_norm per layer, and output_norm.
  EXPECT_EQ(ops_of<ir::RmsNorm>(model.graph).size(), 4u * model.info.n_layer + 1);
  for (const auto& rope : ops_of<ir::Rope>(model.graph)) EXPECT_EQ(rope.layout, ir::RopeLayout::NeoX);
}

}  // namespace
}  // namespace synapse
