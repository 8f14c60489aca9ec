// Generation across 2 and 3 pipeline ranks (threads over an in-process
// transport) gives the single-process run's tokens, greedy and sampled, for
// dense and MoE families; ranks of different plans refuse each other; a rank
// that dies ends the others with an error naming it within the timeout.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "dist/pipeline_generation.h"
#include "exec/cpu_region_kernel.h"
#include "kernels/cpu/cpu_target.h"
#include "support/loopback_transport.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::dist {
namespace {

const std::vector<int32_t> kPrompt = {1, 17, 300, 42, 7, 99, 3};
const SamplingParams kGreedy = [] {
  SamplingParams p;
  p.temp = 0;
  return p;
}();

exec::SessionOptions cpu_options() {
  exec::SessionOptions options;
  options.kernels = exec::cpu_kernel_registry({1, cpu::best_cpu_target()});
  return options;
}

// A tiny `arch` model whose prompts go in several chunks.
Model synth_layers(const test::TempDir& dir, const std::string& arch, uint32_t n_layer) {
  return load_model(test::write_tiny_layers(dir, arch, n_layer, 9), {.max_ctx = 256, .chunk = 4});
}

std::vector<int32_t> single_process(const Model& model, const SamplingParams& sampling, int32_t n) {
  exec::Session session(model, cpu_options());
  Sampler sampler(sampling, static_cast<int32_t>(session.vocab()));
  GenerationOptions options;
  options.n_predict = n;
  return generate(session, sampler, kPrompt, options);
}

// Runs every rank on its own thread; returns rank 0's tokens, or rethrows
// the root cause of a failure: an error other than a rank's timeout waiting
// on the failed one, where there is one.
std::vector<int32_t> pipelined(const Model& model, const PipelineOptions& pipeline, const SamplingParams& sampling,
                               int32_t n, test::LoopbackHub& hub, std::vector<PipelineOptions> per_rank = {}) {
  const int ranks = static_cast<int>(pipeline.ranges.size());
  GenerationOptions options;
  options.n_predict = n;
  std::vector<std::future<std::vector<int32_t>>> results;
  std::vector<std::unique_ptr<test::LoopbackHub::Endpoint>> endpoints;
  for (int r = 0; r < ranks; ++r) endpoints.push_back(hub.endpoint(r));
  for (int r = 0; r < ranks; ++r) {
    const PipelineOptions own = per_rank.empty() ? pipeline : per_rank[static_cast<size_t>(r)];
    results.push_back(std::async(std::launch::async, [&, own, r] {
      return run_pipeline_generation(*endpoints[static_cast<size_t>(r)], model, cpu_options(), own, sampling,
                                     kPrompt, options);
    }));
  }
  std::vector<int32_t> tokens;
  std::exception_ptr timeout, cause;
  for (int r = 0; r < ranks; ++r) {
    try {
      std::vector<int32_t> got = results[static_cast<size_t>(r)].get();
      if (r == 0) tokens = std::move(got);
    } catch (const Error& e) {
      std::exception_ptr& slot = e.kind() == ErrorKind::Io ? timeout : cause;
      if (!slot) slot = std::current_exception();
    }
  }
  if (cause) std::rethrow_exception(cause);
  if (timeout) std::rethrow_exception(timeout);
  return tokens;
}

class PipelineGeneration : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineGeneration, TwoAndThreeRanksGiveTheSingleProcessTokens) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, GetParam(), 4);
  SamplingParams sampled;
  sampled.temp = 0.9f;
  sampled.repeat_penalty = 1.1f;
  sampled.seed = 42;
  for (const SamplingParams& sampling : {kGreedy, sampled}) {
    const std::vector<int32_t> expected = single_process(model, sampling, 12);
    ASSERT_EQ(expected.size(), 12u);
    for (const auto& ranges : {std::vector<exec::StageRange>{{0, 2}, {2, 4}},
                               std::vector<exec::StageRange>{{0, 1}, {1, 3}, {3, 4}}}) {
      test::LoopbackHub hub(static_cast<int>(ranges.size()));
      EXPECT_EQ(pipelined(model, {.ranges = ranges}, sampling, 12, hub), expected) << ranges.size() << " ranks";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, PipelineGeneration, ::testing::Values("qwen2", "llama", "olmoe"));

TEST(PipelineGenerationErrors, RanksOfAnotherPlanOrEpochAreRefused) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "qwen2", 4);
  const PipelineOptions plan{.ranges = {{0, 2}, {2, 4}}, .timeout = std::chrono::milliseconds(1000)};
  PipelineOptions other_split = plan;
  other_split.ranges = {{0, 3}, {3, 4}};
  {
    test::LoopbackHub hub(2);
    try {
      pipelined(model, plan, kGreedy, 4, hub, {plan, other_split});
      FAIL() << "ranks of different splits ran together";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("plan fingerprint"), std::string::npos) << e.what();
    }
  }
  PipelineOptions later_epoch = plan;
  later_epoch.epoch = 2;
  test::LoopbackHub hub(2);
  try {
    pipelined(model, plan, kGreedy, 4, hub, {plan, later_epoch});
    FAIL() << "a stale epoch was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stale epoch 1, expected 2"), std::string::npos) << e.what();
  }
}

TEST(PipelineGenerationErrors, ARankThatDiesEndsTheOthersWithinTheTimeout) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "llama", 4);
  const PipelineOptions plan{.ranges = {{0, 2}, {2, 4}}, .timeout = std::chrono::milliseconds(1500)};
  test::LoopbackHub hub(2);
  hub.kill(1);
  const auto start = std::chrono::steady_clock::now();
  try {
    pipelined(model, plan, kGreedy, 4, hub);
    FAIL() << "ran without rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(PipelineGenerationErrors, RanksAndRangesMustAgree) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "llama", 4);
  test::LoopbackHub hub(3);
  auto endpoint = hub.endpoint(0);
  EXPECT_THROW(run_pipeline_generation(*endpoint, model, cpu_options(), {.ranges = {{0, 2}, {2, 4}}}, {}, kPrompt, {}),
               Error);
}

}  // namespace
}  // namespace synapse::dist
