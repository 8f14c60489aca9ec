// Conditional regions: routed experts Skipped (and their kernel never
// called), Absent regions downstream of a missing input, policy Bypass.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <vector>

#include "exec/reference_interpreter.h"
#include "exec/scheduler.h"
#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"

namespace synapse::exec {
namespace {

using ir::testing::build_moe;
using ir::testing::region_of_kind;
using testing::make_model;

// Runs the reference kernel and counts its calls per region.
class CountingKernel final : public RegionKernel {
 public:
  const char* name() const override { return "counting"; }
  void run(StepContext& ctx, const ir::Region& region) override {
    ++calls[region.kind.expert];
    reference_.run(ctx, region);
  }
  std::map<uint32_t, int> calls;  // by expert

 private:
  ReferenceRegionKernel reference_;
};

struct OutcomeLog {
  std::vector<RegionEvent> events;
  RegionListener listener() {
    return [this](const RegionEvent& event, std::span<const TensorRef>) { events.push_back(event); };
  }
  RegionOutcome of(ir::RegionId region) const {
    for (const RegionEvent& event : events)
      if (event.region == region) return event.outcome;
    ADD_FAILURE() << "region " << region.index << " has no event";
    return RegionOutcome::Executed;
  }
};

TEST(ExecConditional, UnselectedExpertIsSkippedAndItsKernelNotCalled) {
  const Model model = make_model(build_moe());  // top-1 of two experts
  auto counting = std::make_shared<CountingKernel>();
  auto kernels = std::make_shared<KernelRegistry>();
  kernels->add([](const ir::Graph&, const ir::Region& region) { return region.kind.tag == ir::RegionKindTag::Expert; },
               counting);
  SessionOptions options;
  options.kernels = kernels;
  Session session(model, options);
  ReferenceInterpreter interpreter(model);
  OutcomeLog log;
  session.scheduler().set_listener(log.listener());
  const ir::RegionId experts[] = {region_of_kind(model.graph, ir::RegionKind::expert_of(0, 0)),
                                  region_of_kind(model.graph, ir::RegionKind::expert_of(0, 1))};
  EXPECT_STREQ(session.scheduler().kernel(experts[0]).name(), "counting");

  std::map<uint32_t, int> executed;
  for (int32_t position = 0; position < 10; ++position) {
    const int32_t token = (position * 3 + 1) % 10;
    log.events.clear();
    const std::span<const float> logits = session.eval(std::span(&token, 1));
    const RegionOutcome outcomes[] = {log.of(experts[0]), log.of(experts[1])};
    EXPECT_NE(outcomes[0] == RegionOutcome::Executed, outcomes[1] == RegionOutcome::Executed) << position;
    for (uint32_t e = 0; e < 2; ++e) {
      if (outcomes[e] == RegionOutcome::Executed) ++executed[e];
      else EXPECT_EQ(outcomes[e], RegionOutcome::Skipped);
    }
    const std::vector<float> expected = interpreter.run(std::span(&token, 1), std::span(&position, 1)).logits;
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_NEAR(logits[i], expected[i], 1e-5f);
  }
  EXPECT_EQ(counting->calls, executed);
  EXPECT_EQ(executed[0] + executed[1], 10);
}

TEST(ExecConditional, RegionMissingAnInputIsAbsent) {
  // Replace the tolerant GatedSum by a plain Add of both experts: with one
  // expert skipped, the merge region lacks an input and so do the logits.
  ir::Graph graph = build_moe();
  ir::Node& merged = ir::testing::node(graph, "merged");
  merged.op = ir::Add{};
  merged.operands = {ir::testing::value_named(graph, "e0_out"), ir::testing::value_named(graph, "e1_out")};
  ir::derive_boundaries(graph);
  const Model model = make_model(std::move(graph));
  RegionScheduler scheduler(model, KernelRegistry{});
  KvState kv(model.graph, 32);
  OutcomeLog log;
  scheduler.set_listener(log.listener());
  const int32_t token = 2, position = 0;
  const std::span<const float> logits = scheduler.run(StepInput{std::span(&token, 1), std::span(&position, 1)}, kv);
  EXPECT_TRUE(logits.empty());
  EXPECT_EQ(log.of(region_of_kind(model.graph, ir::RegionKind::merge(0))), RegionOutcome::Absent);
  EXPECT_EQ(log.of(region_of_kind(model.graph, ir::RegionKind::logits())), RegionOutcome::Absent);
}

TEST(ExecConditional, SelectActiveMergeTakesThePresentExpert) {
  ir::Graph graph = build_moe();
  ir::Node& merged = ir::testing::node(graph, "merged");
  merged.op = ir::Merge{ir::MergeMode::SelectActive};
  merged.operands.erase(merged.operands.begin());  // no gates
  ir::derive_boundaries(graph);
  const Model model = make_model(std::move(graph));
  Session session(model);
  ReferenceInterpreter interpreter(model);
  OutcomeLog log;
  session.scheduler().set_listener(log.listener());
  for (int32_t position = 0; position < 4; ++position) {
    const int32_t token = position + 2;
    log.events.clear();
    const std::span<const float> logits = session.eval(std::span(&token, 1));
    EXPECT_EQ(log.of(region_of_kind(model.graph, ir::RegionKind::merge(0))), RegionOutcome::Executed);
    const InterpretedStep expected = interpreter.run(std::span(&token, 1), std::span(&position, 1));
    for (size_t i = 0; i < expected.logits.size(); ++i) ASSERT_NEAR(logits[i], expected.logits[i], 1e-5f);
    // The merge equals the one expert that ran.
    const auto value = [&](const char* name) { return expected.values[ir::testing::value_named(model.graph, name).index]; };
    EXPECT_EQ(value("merged"), value("e0_out").empty() ? value("e1_out") : value("e0_out"));
    EXPECT_NE(value("e0_out").empty(), value("e1_out").empty());
  }
}

// Embedding -> Router(0) computing a policy value -> Mlp(0), bypassed
// (h1 = h0) where the policy is zero for every token -> Logits.
ir::Graph policy_graph() {
  using namespace ir;
  GraphBuilder b(Dim::symbolic("Tokens", 1, "chunk"));
  b.bind("chunk", 4);
  b.bind("max_ctx", 16);
  const ValueId ids = b.add_input(EntryKind::TokenIds);
  b.add_input(EntryKind::Positions);
  const auto weight = [&](const char* name, std::vector<int64_t> shape) {
    return b.add_weight(WeightDescriptor{name, 0, 0, 4, Encoding::F32, std::move(shape)});
  };
  const TensorId table = weight("token_embd", {10, 4}), policy_w = weight("policy", {1, 4}),
                 mlp_w = weight("mlp", {4, 4}), norm = weight("output_norm", {4}), out = weight("output", {10, 4});
  b.begin_region(RegionKind::embedding());
  const ValueId h0 = b.embedding(table, ids);
  b.set_name(h0, "h0");
  b.end_region();
  b.begin_region(RegionKind::router(0));
  const ValueId policy = b.matmul(h0, policy_w);
  b.end_region();
  // The bypass output is defined in the region, so its id is the next value's.
  const ValueId h1_id{static_cast<uint32_t>(policy.index + 2)};
  b.begin_region(RegionKind::mlp(0), RegionActivation{PolicyDecision{policy}, Provenance::Heuristic, Bypass{h0, h1_id}});
  const ValueId h1 = b.add(h0, b.matmul(h0, mlp_w));
  b.end_region();
  EXPECT_EQ(h1, h1_id);
  b.set_name(h1, "h1");
  b.begin_region(RegionKind::logits());
  const ValueId logits = b.logits(b.rms_norm(h1, norm, 1e-5f), out);
  b.end_region();
  b.add_output(OutputKind::Logits, logits);
  return std::move(b).finish_unverified();
}

TEST(ExecConditional, ZeroPolicyBypassesTheRegion) {
  for (const bool active : {false, true}) {
    std::map<std::string, std::vector<float>> fixed;
    if (!active) fixed["policy"] = std::vector<float>(4, 0.0f);
    const Model model = make_model(policy_graph(), 3, fixed);
    SessionOptions options;
    options.all_logits = true;
    Session session(model, options);
    ReferenceInterpreter interpreter(model);
    OutcomeLog log;
    session.scheduler().set_listener(log.listener());
    const std::vector<int32_t> tokens{1, 5, 8};
    const std::vector<float> logits = session.eval_all(tokens);
    EXPECT_EQ(log.of(region_of_kind(model.graph, ir::RegionKind::mlp(0))),
              active ? RegionOutcome::Executed : RegionOutcome::Bypassed);
    const std::vector<int32_t> positions{0, 1, 2};
    const InterpretedStep expected = interpreter.run(tokens, positions);
    for (size_t i = 0; i < logits.size(); ++i) ASSERT_NEAR(logits[i], expected.logits[i], 1e-5f);
    const auto value = [&](const char* name) { return expected.values[ir::testing::value_named(model.graph, name).index]; };
    EXPECT_EQ(value("h1") == value("h0"), !active);
  }
}

}  // namespace
}  // namespace synapse::exec
