// The qwen3-30b-a3b preset made small by overrides (one layer, a 256-wide
// residual, 16 experts of which top-8, a 512-token vocabulary) keeps its own
// head dimension: 4 heads of 128 on a residual that n_embd / n_head would
// split into heads of 64. Synapse loads it and runs a step; llama.cpp gives
// the same logits.
#include <gtest/gtest.h>

#include <cmath>
#include <variant>

#include "exec/session.h"
#include "model/model.h"
#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synth/synth.h"

namespace synapse {
namespace {

constexpr uint32_t kVocab = 512;

std::string write_small_qwen3_30b(const test::TempDir& dir) {
  SynthOptions o;
  o.preset = "qwen3-30b-a3b";
  o.n_layer = 1;
  o.n_embd = 256;
  o.n_head = 4;
  o.n_head_kv = 2;
  o.n_ff = 64;
  o.n_expert = 16;
  o.n_vocab = kVocab;
  o.seed = 5;
  const std::string path = dir.file("qwen3-30b-a3b-small.gguf");
  synth_model(o, path);
  return path;
}

const std::vector<int32_t> kPrompt = {1, 17, 300, 42};

TEST(SynthQwen3Moe, SmallOverridesKeepTheHeadDimensionAndRunAStep) {
  test::TempDir dir;
  const Model model = load_model(write_small_qwen3_30b(dir), LoadOptions{.max_ctx = 16});
  EXPECT_EQ(model.info.architecture, "qwen3moe");
  uint32_t attention_layers = 0;
  for (const ir::Node& node : model.graph.nodes)
    if (const auto* a = std::get_if<ir::CausalAttention>(&node.op)) {
      ++attention_layers;
      EXPECT_EQ(std::tie(a->heads, a->kv_heads, a->head_dim), std::make_tuple(4u, 2u, 128u));
    }
  EXPECT_EQ(attention_layers, 1u);

  exec::SessionOptions options;
  options.all_logits = true;
  exec::Session session(model, options);
  const std::vector<float> prompt_rows = session.eval_all(kPrompt);
  ASSERT_EQ(prompt_rows.size(), kPrompt.size() * kVocab);
  for (float x : prompt_rows) ASSERT_TRUE(std::isfinite(x));
  const std::vector<int32_t> next = {7};
  for (float x : session.eval(next)) ASSERT_TRUE(std::isfinite(x));
}

TEST(SynthQwen3Moe, SmallOverridesGiveLlamaCppsLogits) {
  SYNAPSE_SKIP_UNLESS_PEER();
  test::TempDir dir;
  const std::string path = write_small_qwen3_30b(dir);
  const std::string dump = dir.file("peer.f32");
  std::vector<std::string> args = {"logits", path, "--kv", "f32", "--fa", "off", "--dump", dump};
  for (int32_t t : kPrompt) args.push_back(std::to_string(t));
  ASSERT_EQ(test::run_peer(args).exit_code, 0);
  const std::vector<float> peer = test::read_floats(dump);

  const Model model = load_model(path, LoadOptions{.max_ctx = 16});
  exec::SessionOptions options;
  options.all_logits = true;
  options.kv = {Encoding::F32, Encoding::F32};  // as the peer's --kv f32
  exec::Session session(model, options);
  const std::vector<float> ours = session.eval_all(kPrompt);
  ASSERT_EQ(peer.size(), ours.size());
  float worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(ours[i] - peer[i]));
  EXPECT_LT(worst, 2e-3f);  // F32 weights: summation order alone, as tests/model/moe_peer_test.cpp
}

}  // namespace
}  // namespace synapse
