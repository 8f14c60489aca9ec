// MoE prefill: a chunk runs each selected expert once, on exactly the tokens
// routed to it (gathered), and gives the logits that decoding token by token
// gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "exec/session.h"
#include "model/model.h"
#include "support/tiny_model.h"

namespace synapse::exec {
namespace {

// Runs the reference kernel and records the tokens of each call, by region.
class RecordingKernel final : public RegionKernel {
 public:
  const char* name() const override { return "recording"; }
  void run(StepContext& ctx, const ir::Region& region) override {
    calls[region_index(ctx.graph, region)].push_back(ctx.tokens);
    reference_.run(ctx, region);
  }
  std::map<uint32_t, std::vector<int64_t>> calls;

 private:
  static uint32_t region_index(const ir::Graph& graph, const ir::Region& region) {
    return static_cast<uint32_t>(&region - graph.regions.data());
  }
  ReferenceRegionKernel reference_;
};

const std::vector<int32_t> kPrompt = {1, 17, 300, 42, 7, 5, 400, 123, 88, 9, 250, 31};

TEST(MoePrefill, ChunkRunsEachSelectedExpertOnceOnItsRoutedTokens) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "olmoe", "q8_0"));
  auto recording = std::make_shared<RecordingKernel>();
  auto kernels = std::make_shared<KernelRegistry>();
  kernels->add([](const ir::Graph&, const ir::Region& r) { return r.kind.tag == ir::RegionKindTag::Expert; },
               recording);
  SessionOptions options;
  options.kernels = kernels;
  Session session(model, options);
  // Tokens routed to each expert region, read from its router's gates.
  std::map<uint32_t, int64_t> routed;
  session.scheduler().set_listener([&](const RegionEvent& event, std::span<const TensorRef> values) {
    const ir::Region& region = model.graph.regions[event.region.index];
    const auto* slot = std::get_if<ir::RouteSlot>(&region.activation.decision);
    if (!slot) return;
    const TensorRef& gates = values[slot->router.index];
    int64_t n = 0;
    for (int64_t t = 0; t < gates.rows; ++t) n += gates.data[t * gates.cols + slot->slot] != 0.0f;
    routed[event.region.index] = n;
  });
  session.eval(kPrompt);

  ASSERT_FALSE(routed.empty());
  bool some_expert_gathered = false;
  for (const auto& [region, tokens] : routed) {
    if (tokens == 0) {
      EXPECT_EQ(recording->calls.count(region), 0u) << region;
      continue;
    }
    ASSERT_EQ(recording->calls[region].size(), 1u) << region;  // once per chunk
    EXPECT_EQ(recording->calls[region][0], tokens) << region;   // on its routed tokens only
    some_expert_gathered = some_expert_gathered || tokens < static_cast<int64_t>(kPrompt.size());
  }
  EXPECT_TRUE(some_expert_gathered);
}

TEST(MoePrefill, ChunkLogitsEqualTokenByTokenDecode) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2moe", "f32"));
  SessionOptions all_rows;
  all_rows.all_logits = true;
  Session prefill(model, all_rows), decode(model);
  const std::vector<float> rows = prefill.eval_all(kPrompt);
  const size_t vocab = static_cast<size_t>(prefill.vocab());
  ASSERT_EQ(rows.size(), kPrompt.size() * vocab);
  for (size_t t = 0; t < kPrompt.size(); ++t) {
    const std::span<const float> step = decode.eval(std::span<const int32_t>(&kPrompt[t], 1));
    float worst = 0;
    for (size_t v = 0; v < vocab; ++v) worst = std::max(worst, std::abs(step[v] - rows[t * vocab + v]));
    EXPECT_LT(worst, 1e-4f) << "token " << t;
  }
}

// Runs the reference kernel; while armed, throws from the first expert run
// on gathered tokens (fewer than the prompt's), after that run's inputs
// were gathered.
class ThrowingExpertKernel final : public RegionKernel {
 public:
  const char* name() const override { return "throwing"; }
  void run(StepContext& ctx, const ir::Region& region) override {
    if (armed && ctx.tokens < static_cast<int64_t>(kPrompt.size())) {
      armed = false;
      throw std::runtime_error("expert failed");
    }
    reference_.run(ctx, region);
  }
  bool armed = false;

 private:
  ReferenceRegionKernel reference_;
};

TEST(MoePrefill, ExpertThrowingOnGatheredTokensLeavesTheSessionAsBefore) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "olmoe", "q8_0"));
  Session reference(model);
  const std::span<const float> want = reference.eval(kPrompt);
  auto throwing = std::make_shared<ThrowingExpertKernel>();
  auto kernels = std::make_shared<KernelRegistry>();
  kernels->add([](const ir::Graph&, const ir::Region& r) { return r.kind.tag == ir::RegionKindTag::Expert; },
               throwing);
  SessionOptions options;
  options.kernels = kernels;
  Session session(model, options);
  throwing->armed = true;
  EXPECT_THROW(session.eval(kPrompt), std::runtime_error);
  ASSERT_FALSE(throwing->armed) << "no expert ran on gathered tokens";
  EXPECT_EQ(session.position(), 0);
  const std::span<const float> got = session.eval(kPrompt);
  ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
}

}  // namespace
}  // namespace synapse::exec
