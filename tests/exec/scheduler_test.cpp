// The region scheduler against the reference interpreter on the tiny dense
// graph, and the pieces it is built from (region order, buffer plan).
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "exec/buffer_plan.h"
#include "exec/reference_interpreter.h"
#include "exec/region_order.h"
#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"

namespace synapse::exec {
namespace {

using ir::testing::build_dense;
using ir::testing::DenseConfig;
using ir::testing::value_named;
using testing::make_model;

void expect_near(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance,
                 const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], tolerance) << what << " [" << i << "]";
}

// Copies of every region output the scheduler produced, by value.
struct OutputRecorder {
  const ir::Graph& graph;
  std::map<uint32_t, std::vector<float>> outputs;
  std::vector<RegionEvent> events;

  RegionListener listener() {
    return [this](const RegionEvent& event, std::span<const TensorRef> values) {
      events.push_back(event);
      for (ir::ValueId out : graph.region(event.region).boundary.outputs) {
        const TensorRef& value = values[out.index];
        if (value.present && value.data) outputs[out.index].assign(value.data, value.data + value.elements());
      }
    };
  }
};

void expect_scheduler_matches_interpreter(const DenseConfig& config) {
  const Model model = make_model(build_dense(config));
  ReferenceInterpreter interpreter(model);
  SessionOptions options;
  options.all_logits = true;
  Session session(model, options);
  OutputRecorder recorder{model.graph, {}, {}};
  session.scheduler().set_listener(recorder.listener());

  const std::vector<std::vector<int32_t>> steps{{1, 4, 7}, {3}, {9, 0}};
  int32_t position = 0;
  for (const std::vector<int32_t>& tokens : steps) {
    std::vector<int32_t> positions;
    for (size_t i = 0; i < tokens.size(); ++i) positions.push_back(position++);
    recorder.outputs.clear();
    const std::vector<float> logits = session.eval_all(tokens);
    const InterpretedStep expected = interpreter.run(tokens, positions);
    ASSERT_FALSE(recorder.outputs.empty());
    for (const auto& [value, data] : recorder.outputs)
      expect_near(data, expected.values[value], 1e-5f, model.graph.values[value].name);
    expect_near(logits, expected.logits, 1e-5f, "logits");
  }
}

TEST(ExecScheduler, MatchesInterpreterRegionByRegion) { expect_scheduler_matches_interpreter({}); }

TEST(ExecScheduler, MatchesInterpreterWithQ80WeightAndPlainAttention) {
  DenseConfig config;
  config.ffn = 32;  // Q8_0 rows hold whole blocks of 32
  config.down_encoding = Encoding::Q8_0;
  config.kv_heads = 2;
  config.up_before_gate = true;
  expect_scheduler_matches_interpreter(config);
}

TEST(ExecScheduler, Fp64AccumulationAgreesWithFp32) {
  const Model model = make_model(build_dense());
  ReferenceInterpreter exact(model, ref::Accumulation::F64);
  SessionOptions options;
  options.all_logits = true;
  Session f32(model, options);
  options.accumulation = ref::Accumulation::F64;
  Session f64(model, options);
  const std::vector<int32_t> tokens{5, 1, 2, 8, 3};
  const std::vector<int32_t> positions{0, 1, 2, 3, 4};
  const std::vector<float> expected = exact.run(tokens, positions).logits;
  expect_near(f64.eval_all(tokens), expected, 1e-6f, "f64 logits");
  expect_near(f32.eval_all(tokens), expected, 1e-4f, "f32 logits");
}

TEST(ExecScheduler, EventsCoverEveryRegionInOrder) {
  const Model model = make_model(build_dense());
  Session session(model);
  OutputRecorder recorder{model.graph, {}, {}};
  session.scheduler().set_listener(recorder.listener());
  session.eval(std::vector<int32_t>{1, 2});
  ASSERT_EQ(recorder.events.size(), 4u);
  const char* kinds[] = {"Embedding", "Attention", "Mlp", "Logits"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_STREQ(recorder.events[i].kind, kinds[i]);
    EXPECT_EQ(recorder.events[i].outcome, RegionOutcome::Executed);
    EXPECT_STREQ(recorder.events[i].kernel, "reference");
    EXPECT_GT(recorder.events[i].weight_bytes_touched, 0u);
  }
}

TEST(ExecScheduler, RegionOrderIsTopological) {
  const ir::Graph graph = build_dense();
  const std::vector<ir::RegionId> order = region_order(graph);
  ASSERT_EQ(order.size(), graph.regions.size());
  std::vector<size_t> at(graph.regions.size());
  for (size_t i = 0; i < order.size(); ++i) at[order[i].index] = i;
  for (size_t r = 0; r < graph.regions.size(); ++r)
    for (ir::ValueId input : graph.regions[r].boundary.inputs)
      for (size_t p = 0; p < graph.regions.size(); ++p)
        for (ir::ValueId out : graph.regions[p].boundary.outputs)
          if (out == input) {
            EXPECT_LT(at[p], at[r]);
          }
}

TEST(ExecBufferPlan, ValuesShareSpaceOnlyWhenLifetimesAreDisjoint) {
  const ir::Graph graph = build_dense();
  const std::vector<ir::RegionId> order = region_order(graph);
  const BufferPlan plan = plan_buffers(graph, order, 4, 4);
  uint64_t total = 0;
  for (uint32_t v = 0; v < graph.values.size(); ++v)
    if (plan.offsets[v] != BufferPlan::kNoBuffer)
      total += static_cast<uint64_t>(extent_of(graph.values[v].type, 4).rows * extent_of(graph.values[v].type, 4).cols);
  EXPECT_LT(plan.arena_floats, total);
  // The attention block's residual h1 is used by the MLP; the embedding h0
  // and the MLP's residual h2 never live at once, but h1 and h2 do.
  const auto offset = [&](const char* name) { return plan.offsets[value_named(graph, name).index]; };
  EXPECT_NE(offset("h1"), offset("h2"));
  EXPECT_NE(offset("h0"), offset("h1"));
  EXPECT_NE(offset("logits"), offset("out_norm"));
  EXPECT_EQ(plan.offsets[value_named(graph, "ids").index], BufferPlan::kNoBuffer);
  EXPECT_EQ(plan.offsets[value_named(graph, "k_cache").index], BufferPlan::kNoBuffer);
}

}  // namespace
}  // namespace synapse::exec
