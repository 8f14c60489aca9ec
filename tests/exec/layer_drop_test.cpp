// Layer drop (--drop-layers): the plan bypasses a dropped layer's residual
// regions and never runs the rest; a model without any of its layers gives
// the output head of the embeddings; dropped regions read no
// weight bytes, their KV slots get no pages and the memory plan leaves
// their weights and KV out; every event of such a run is QualityBounded.
#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "exec/layer_drop.h"
#include "exec/session.h"
#include "kernels/cpu/cpu_target.h"
#include "kernels/ref/linear.h"
#include "kernels/ref/norm.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::exec {
namespace {


SessionOptions drop_options(std::vector<uint32_t> drop = {}) {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.all_logits = true;
  options.drop_layers = std::move(drop);
  return options;
}

const std::vector<int32_t> kTokens = {1, 5, 9, 2, 7, 3, 11, 4};

TEST(PlanLayerDrop, DenseLayerBypassesItsResidualRegionsAndLeavesOutItsWeightsAndSlots) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "llama", 2, 7));
  const LayerDrop drop = plan_layer_drop(model.graph, std::vector<uint32_t>{1, 1});
  EXPECT_EQ(drop.layers, std::vector<uint32_t>{1});
  EXPECT_EQ(drop.mode(), "QualityBounded (layer 1 dropped)");
  int bypassed = 0;
  for (uint32_t r = 0; r < model.graph.regions.size(); ++r) {
    const ir::Region& region = model.graph.regions[r];
    const bool in_layer_1 = (region.kind.tag == ir::RegionKindTag::Attention ||
                             region.kind.tag == ir::RegionKindTag::Mlp) && region.kind.layer == 1;
    EXPECT_EQ(drop.dropped(ir::RegionId{r}), in_layer_1) << ir::to_string(region.kind);
    if (in_layer_1 && std::holds_alternative<ir::Bypass>(*drop.regions[r])) ++bypassed;
    for (ir::TensorId w : region.boundary.weights) EXPECT_EQ(drop.weights[w.index], in_layer_1);
    for (ir::SlotId s : region.boundary.state_writes) EXPECT_EQ(drop.slots[s.index], in_layer_1);
  }
  EXPECT_EQ(bypassed, 2);
}

TEST(PlanLayerDrop, LayerTheModelDoesNotHaveIsAUsageError) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "llama", 2, 7));
  try {
    plan_layer_drop(model.graph, std::vector<uint32_t>{2});
    FAIL() << "layer 2 of 2 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("the model has 2 layers"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(plan_layer_drop(model.graph, {}).empty());
}

TEST(ParseLayerList, TakesCommaSeparatedNumbersOnly) {
  EXPECT_EQ(parse_layer_list("10,11"), (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(parse_layer_list("0"), std::vector<uint32_t>{0});
  for (const char* bad : {"", "1,", ",1", "a", "1;2", "-1", "1 ,2", "9999999999"})
    EXPECT_THROW(parse_layer_list(bad), Error) << bad;
}

// With every layer dropped, the residual stream is the token's embedding:
// the logits are the output head applied to it, computed here with the
// reference ops the reference kernel runs.
std::vector<float> output_head_of_embeddings(const Model& model, std::span<const int32_t> tokens) {
  const ir::Graph& graph = model.graph;
  const WeightTable weights(model);
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<float> x, normed, logits, scratch;
  for (const ir::Node& node : graph.nodes) {
    if (const auto* e = std::get_if<ir::Embedding>(&node.op)) {
      const ref::EncodedMatrix& table = weights.matrix(e->table);
      x.resize(static_cast<size_t>(n * table.cols));
      ref::embedding(tokens.data(), n, table, x.data());
    }
    if (const auto* l = std::get_if<ir::Logits>(&node.op)) {
      const ir::Node& norm = graph.node(graph.value(node.operands[0]).producer);
      const auto& rms = std::get<ir::RmsNorm>(norm.op);
      const ref::EncodedMatrix& out = weights.matrix(l->weight);
      normed.resize(x.size());
      ref::rms_norm(x.data(), n, out.cols, weights.vector(rms.weight), rms.eps, normed.data(), ref::Accumulation::F32);
      logits.resize(static_cast<size_t>(n * out.rows));
      scratch.resize(static_cast<size_t>(out.cols));
      ref::matmul(normed.data(), n, out, nullptr, logits.data(), scratch.data(), ref::Accumulation::F32);
    }
  }
  return logits;
}

class EveryLayerDropped : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryLayerDropped, GivesTheOutputHeadOfTheEmbeddings) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, GetParam(), 2, 7));
  SessionOptions options;  // the reference kernel: the ops computed above
  options.all_logits = true;
  options.drop_layers = {0, 1};
  Session dropped(model, options);
  EXPECT_EQ(dropped.eval_all(kTokens), output_head_of_embeddings(model, kTokens));
  const std::vector<int32_t> next = {6};
  EXPECT_EQ(dropped.eval_all(next), output_head_of_embeddings(model, next));
  EXPECT_EQ(dropped.kv().pages_allocated(), 0);
}

INSTANTIATE_TEST_SUITE_P(Arches, EveryLayerDropped, ::testing::Values("llama", "qwen2", "qwen2moe", "olmoe"));

// The CPU kernels give a dropped layer's bypass the bits of the reference
// kernel's (the stream is copied, not recomputed).
TEST(SessionLayerDrop, CpuKernelsMatchTheReferenceKernelWithALayerDropped) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "qwen2moe", 3, 7));
  Session cpu(model, drop_options({1}));
  SessionOptions reference_options;
  reference_options.all_logits = true;
  reference_options.drop_layers = {1};
  Session reference(model, reference_options);
  Session full(model, drop_options());
  const std::vector<float> got = cpu.eval_all(kTokens), want = reference.eval_all(kTokens);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-3f) << i;
  EXPECT_NE(got, full.eval_all(kTokens));  // the layer did something
}

TEST(SessionLayerDrop, DroppedLayerReadsNoWeightsWritesNoKvAndIsQualityBounded) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "olmoe", 2, 7));
  Session full(model, drop_options());
  Session dropped(model, drop_options({0}));
  std::vector<RegionEvent> events;
  dropped.scheduler().set_listener(
      [&events](const RegionEvent& e, std::span<const TensorRef>) { events.push_back(e); });
  dropped.eval_all(kTokens);
  full.eval_all(kTokens);
  bool saw_bypass = false;
  for (const RegionEvent& e : events) {
    EXPECT_TRUE(e.quality_bounded);
    const bool layer_0 = e.kind != std::string("Embedding") && e.kind != std::string("Logits") && e.layer == 0;
    EXPECT_EQ(e.dropped, layer_0) << e.kind << " " << e.layer;
    if (!layer_0) continue;
    EXPECT_EQ(e.weight_bytes_touched, 0u);
    EXPECT_NE(e.outcome, RegionOutcome::Executed);
    saw_bypass |= e.outcome == RegionOutcome::Bypassed;
  }
  EXPECT_TRUE(saw_bypass);
  // Two layers, one dropped: half the KV pages, half the KV room planned.
  EXPECT_EQ(2 * dropped.kv().pages_allocated(), full.kv().pages_allocated());
  EXPECT_EQ(2 * dropped.memory().kv_reachable, full.memory().kv_reachable);
  EXPECT_LT(dropped.memory().plan.weight_bytes, full.memory().plan.weight_bytes);
}

TEST(SessionLayerDrop, PagedSessionNeverLoadsADroppedLayersWeights) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "llama", 2, 7));
  SessionOptions options = drop_options({1});
  Session resident(model, options);
  // Less than the working set and the weights the plan keeps: some page.
  const MemoryAdmission& admission = resident.memory();
  const uint64_t budget = admission.ledger.total() + admission.kv_reachable - 4096;
  options.memory.budget = memory::parse_budget(std::to_string(budget));
  Session paged(model, options);
  ASSERT_TRUE(paged.residency());
  for (const memory::Chunk& chunk : paged.memory().plan.chunks)
    EXPECT_FALSE(paged.scheduler().layer_drop().weights[chunk.weight.index]) << model.graph.weight(chunk.weight).name;
  EXPECT_EQ(paged.eval_all(kTokens), resident.eval_all(kTokens));
}

}  // namespace
}  // namespace synapse::exec
