// Pipeline stages (SPEC §11): sessions that each run a contiguous range of
// layers and hand the hidden vectors on give, together, the logits of the
// whole model bit for bit, for dense and MoE families; their plans read
// only their own layers' weights and KV; layer ranges parse and split as
// documented.
#include <gtest/gtest.h>

#include <vector>

#include "exec/cpu_region_kernel.h"
#include "exec/pipeline_stage.h"
#include "exec/session.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::exec {
namespace {


SessionOptions stage_options(std::optional<StageRange> stage = std::nullopt) {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.stage = stage;
  return options;
}

// A prompt, then greedy decode steps: every step's logits through the
// stages, each step's hidden vectors handed from one stage to the next.
std::vector<std::vector<float>> staged_logits(const Model& model, const std::vector<StageRange>& ranges) {
  std::vector<std::unique_ptr<Session>> stages;
  for (const StageRange& range : ranges) stages.push_back(std::make_unique<Session>(model, stage_options(range)));
  std::vector<int32_t> tokens = {1, 17, 300, 42, 7};
  std::vector<std::vector<float>> steps;
  for (int step = 0; step < 8; ++step) {
    std::vector<float> hidden;
    std::span<const float> out;
    for (auto& stage : stages) {
      out = stage->eval_stage(tokens, hidden);
      hidden.assign(out.begin(), out.end());
    }
    steps.emplace_back(out.begin(), out.end());
    const auto best = std::max_element(out.begin(), out.end()) - out.begin();
    tokens = {static_cast<int32_t>(best)};
  }
  return steps;
}

class PipelineStages : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineStages, TwoAndThreeStagesGiveTheWholeModelsLogitsBitForBit) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, GetParam(), 4, 3));
  const auto whole = staged_logits(model, {{0, 4}});
  EXPECT_EQ(staged_logits(model, {{0, 2}, {2, 4}}), whole);
  EXPECT_EQ(staged_logits(model, {{0, 1}, {1, 3}, {3, 4}}), whole);
  // The one-stage pipeline is the plain session.
  Session plain(model, stage_options());
  const std::span<const float> first = plain.eval(std::vector<int32_t>{1, 17, 300, 42, 7});
  EXPECT_EQ(std::vector<float>(first.begin(), first.end()), whole.front());
}

INSTANTIATE_TEST_SUITE_P(Families, PipelineStages, ::testing::Values("llama", "qwen2", "olmoe"));

TEST(PipelineStagePlan, AStageReadsOnlyItsLayersWeightsAndSlots) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "qwen2", 4, 3));
  const LayerDrop middle = plan_stage(model.graph, {1, 3});
  EXPECT_TRUE(middle.placed && middle.hidden_in && middle.hidden_out);
  EXPECT_STREQ(middle.numerical_mode(), "EquivalentNumerics");
  EXPECT_EQ(middle.layers, (std::vector<uint32_t>{0, 3}));
  for (uint32_t w = 0; w < model.graph.weights.size(); ++w) {
    const std::string& name = model.graph.weights[w].name;
    const bool ours = name.starts_with("blk.1.") || name.starts_with("blk.2.");
    EXPECT_EQ(middle.weights[w], !ours) << name;  // token_embd and the output head too
  }
  for (const ir::Region& region : model.graph.regions)
    for (ir::SlotId slot : region.boundary.state_writes)
      EXPECT_EQ(middle.slots[slot.index], region.kind.layer != 1 && region.kind.layer != 2) << slot.index;
  const LayerDrop first = plan_stage(model.graph, {0, 2});
  EXPECT_FALSE(first.hidden_in);
  EXPECT_TRUE(first.hidden_out);
  EXPECT_EQ(plan_stage(model.graph, {0, 4}).layers.size(), 0u);
  EXPECT_THROW(plan_stage(model.graph, {2, 2}), Error);
  EXPECT_THROW(plan_stage(model.graph, {3, 5}), Error);
}

TEST(PipelineStagePlan, StageStepsCheckTheirHiddenVectors) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "llama", 4, 3));
  Session second(model, stage_options(StageRange{2, 4}));
  const std::vector<int32_t> tokens = {1, 2};
  EXPECT_THROW(second.eval_stage(tokens, {}), Error);
  const std::vector<float> short_hidden(static_cast<size_t>(second.hidden_width()), 0.5f);
  EXPECT_THROW(second.eval_stage(tokens, short_hidden), Error);
  EXPECT_EQ(second.position(), 0);
  // A stage has no whole model's logits to give (the first stage's steps
  // end in hidden vectors, narrower than a logits row).
  Session first(model, stage_options(StageRange{0, 2}));
  EXPECT_THROW(first.eval(tokens), Error);
  EXPECT_THROW(first.eval_last(tokens, 1), Error);
  EXPECT_THROW(second.eval(tokens), Error);
  EXPECT_EQ(first.position(), 0);
  SessionOptions both = stage_options(StageRange{0, 2});
  both.drop_layers = {1};
  EXPECT_THROW(Session(model, both), Error);
}

TEST(PipelineStageRanges, ParseContiguousRangesCoveringTheModel) {
  EXPECT_EQ(parse_stage_ranges("0-11,12-23", 24), (std::vector<StageRange>{{0, 12}, {12, 24}}));
  EXPECT_EQ(parse_stage_ranges("0-0,1-2,3-3", 4), (std::vector<StageRange>{{0, 1}, {1, 3}, {3, 4}}));
  for (const char* bad : {"", "0-11", "1-23", "0-11,13-23", "0-11,12-24", "0-5,4-23", "a-b", "0-11;12-23", "5-3,4-23"})
    EXPECT_THROW(parse_stage_ranges(bad, 24), Error) << bad;
}

TEST(PipelineStageRanges, SplitsBalanceLayersOrWeightBytes) {
  const test::TempDir dir;
  const Model model = load_model(test::write_tiny_layers(dir, "llama", 6, 3));
  EXPECT_EQ(split_stages(model.graph, 2, SplitBy::Layers), (std::vector<StageRange>{{0, 3}, {3, 6}}));
  EXPECT_EQ(split_stages(model.graph, 3, SplitBy::Layers), (std::vector<StageRange>{{0, 2}, {2, 4}, {4, 6}}));
  EXPECT_EQ(split_stages(model.graph, 6, SplitBy::Bytes).size(), 6u);
  const auto bytes = split_stages(model.graph, 2, SplitBy::Bytes);
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[0].first_layer, 0u);
  EXPECT_EQ(bytes[0].end_layer, bytes[1].first_layer);
  EXPECT_EQ(bytes[1].end_layer, 6u);
  EXPECT_THROW(split_stages(model.graph, 7, SplitBy::Layers), Error);
  EXPECT_THROW(split_stages(model.graph, 0, SplitBy::Bytes), Error);
}

}  // namespace
}  // namespace synapse::exec
