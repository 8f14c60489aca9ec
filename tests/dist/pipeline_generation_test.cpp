// Generation across 2 and 3 pipeline ranks (threads over an in-process
// transport) gives the single-process run's tokens, greedy and sampled, for
// dense and MoE families, one sequence or several in micro-batches; every
// hop is measured and each frame reported; ranks of different plans refuse
// each other; a rank that dies ends the others with an error naming it
// within the timeout.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "dist/pipeline_generation.h"
#include "generate/parallel_generation.h"
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

exec::SessionOptions rank_options(int sequences = 1) {
  exec::SessionOptions options;
  options.kernels = exec::cpu_kernel_registry({1, cpu::best_cpu_target()});
  options.logits_rows = sequences;
  return options;
}

// A tiny `arch` model whose prompts go in several chunks.
Model synth_layers(const test::TempDir& dir, const std::string& arch, uint32_t n_layer) {
  return load_model(test::write_tiny_layers(dir, arch, n_layer, 9), {.max_ctx = 256, .chunk = 4});
}

std::vector<int32_t> single_process(const Model& model, const SamplingParams& sampling, int32_t n) {
  exec::Session session(model, rank_options());
  Sampler sampler(sampling, static_cast<int32_t>(session.vocab()));
  GenerationOptions options;
  options.n_predict = n;
  return generate(session, sampler, kPrompt, options);
}

std::vector<std::vector<int32_t>> single_process_parallel(const Model& model, const SamplingParams& sampling,
                                                          int32_t n, int sequences) {
  exec::Session session(model, rank_options(sequences));
  GenerationOptions options;
  options.n_predict = n;
  return generate_parallel(session, sampling, kPrompt, sequences, options);
}

// Runs every rank on its own thread; returns rank 0's sequences, or
// rethrows the root cause of a failure: an error other than a rank's
// timeout waiting on the failed one, where there is one.
std::vector<std::vector<int32_t>> pipelined_sequences(const Model& model, const PipelineOptions& pipeline,
                                                      const SamplingParams& sampling, int32_t n,
                                                      test::LoopbackHub& hub,
                                                      std::vector<PipelineOptions> per_rank = {}) {
  const int ranks = static_cast<int>(pipeline.ranges.size());
  GenerationOptions options;
  options.n_predict = n;
  std::vector<std::future<std::vector<std::vector<int32_t>>>> results;
  std::vector<std::unique_ptr<test::LoopbackHub::Endpoint>> endpoints;
  for (int r = 0; r < ranks; ++r) endpoints.push_back(hub.endpoint(r));
  for (int r = 0; r < ranks; ++r) {
    const PipelineOptions own = per_rank.empty() ? pipeline : per_rank[static_cast<size_t>(r)];
    results.push_back(std::async(std::launch::async, [&, own, r] {
      return PipelineRank(*endpoints[static_cast<size_t>(r)], model, rank_options(own.sequences), own)
          .generate(sampling, kPrompt, options);
    }));
  }
  std::vector<std::vector<int32_t>> tokens;
  std::exception_ptr timeout, cause;
  for (int r = 0; r < ranks; ++r) {
    try {
      std::vector<std::vector<int32_t>> got = results[static_cast<size_t>(r)].get();
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

std::vector<int32_t> pipelined(const Model& model, const PipelineOptions& pipeline, const SamplingParams& sampling,
                               int32_t n, test::LoopbackHub& hub, std::vector<PipelineOptions> per_rank = {}) {
  const std::vector<std::vector<int32_t>> sequences =
      pipelined_sequences(model, pipeline, sampling, n, hub, std::move(per_rank));
  EXPECT_EQ(sequences.size(), 1u);
  return sequences.empty() ? std::vector<int32_t>{} : sequences[0];
}

SamplingParams sampled_params() {
  SamplingParams sampled;
  sampled.temp = 0.9f;
  sampled.repeat_penalty = 1.1f;
  sampled.seed = 42;
  return sampled;
}

class PipelineGeneration : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineGeneration, TwoAndThreeRanksGiveTheSingleProcessTokens) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, GetParam(), 4);
  for (const SamplingParams& sampling : {kGreedy, sampled_params()}) {
    const std::vector<int32_t> expected = single_process(model, sampling, 12);
    ASSERT_EQ(expected.size(), 12u);
    for (const auto& ranges : {std::vector<exec::StageRange>{{0, 2}, {2, 4}},
                               std::vector<exec::StageRange>{{0, 1}, {1, 3}, {3, 4}}}) {
      test::LoopbackHub hub(static_cast<int>(ranges.size()));
      EXPECT_EQ(pipelined(model, {.ranges = ranges}, sampling, 12, hub), expected) << ranges.size() << " ranks";
    }
  }
}

// Four continuations in micro-batches (one per rank, one for all, one per
// sequence): each sequence's tokens are the single-process batched run's,
// some ending early at a stop token while the others go on.
TEST_P(PipelineGeneration, MicroBatchedSequencesGiveTheSingleProcessTokens) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, GetParam(), 4);
  const std::vector<std::vector<int32_t>> expected = single_process_parallel(model, sampled_params(), 10, 4);
  for (const auto& ranges : {std::vector<exec::StageRange>{{0, 2}, {2, 4}},
                             std::vector<exec::StageRange>{{0, 1}, {1, 3}, {3, 4}}})
    for (int micro_batches : {0, 1, 4}) {
      test::LoopbackHub hub(static_cast<int>(ranges.size()));
      const PipelineOptions pipeline{.ranges = ranges, .sequences = 4, .micro_batches = micro_batches};
      EXPECT_EQ(pipelined_sequences(model, pipeline, sampled_params(), 10, hub), expected)
          << ranges.size() << " ranks, " << micro_batches << " micro-batches";
    }
}

INSTANTIATE_TEST_SUITE_P(Families, PipelineGeneration, ::testing::Values("qwen2", "llama", "olmoe"));

TEST(PipelineGenerationStops, ASequenceEndsAtAStopTokenWhileTheOthersGoOn) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "llama", 4);
  const std::vector<std::vector<int32_t>> free_run = single_process_parallel(model, sampled_params(), 8, 3);
  // A token of sequence 1 past its first, new to it, stops it there
  // (and any other sequence that samples it).
  size_t at = 1;
  while (at < free_run[1].size() &&
         std::find(free_run[1].begin(), free_run[1].begin() + static_cast<long>(at), free_run[1][at]) !=
             free_run[1].begin() + static_cast<long>(at))
    ++at;
  ASSERT_LT(at, free_run[1].size());
  const int32_t stop = free_run[1][at];
  exec::Session session(model, rank_options(3));
  GenerationOptions options;
  options.n_predict = 8;
  options.stop_tokens = {stop};
  const std::vector<std::vector<int32_t>> expected = generate_parallel(session, sampled_params(), kPrompt, 3, options);
  ASSERT_EQ(expected[1].size(), at + 1);
  ASSERT_TRUE(expected[0].size() == 8 || expected[2].size() == 8) << "no sequence outlived the stopped one";
  std::vector<std::vector<int32_t>> got(3);
  std::vector<std::unique_ptr<test::LoopbackHub::Endpoint>> endpoints;
  test::LoopbackHub hub(2);
  for (int r = 0; r < 2; ++r) endpoints.push_back(hub.endpoint(r));
  const PipelineOptions pipeline{.ranges = {{0, 2}, {2, 4}}, .sequences = 3};
  auto later = std::async(std::launch::async, [&] {
    return PipelineRank(*endpoints[1], model, rank_options(3), pipeline).generate(sampled_params(), kPrompt, options);
  });
  got = PipelineRank(*endpoints[0], model, rank_options(3), pipeline).generate(sampled_params(), kPrompt, options);
  EXPECT_TRUE(later.get().empty());
  EXPECT_EQ(got, expected);
}

// A benchmark's repetitions: each generation on the same ranks starts from
// an empty stage and gives the same tokens.
TEST(PipelineGenerationRepeats, EachGenerationOnTheSameRanksStartsAfresh) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "qwen2", 4);
  const std::vector<std::vector<int32_t>> expected = single_process_parallel(model, sampled_params(), 6, 2);
  test::LoopbackHub hub(2);
  auto first = hub.endpoint(0);
  auto second = hub.endpoint(1);
  const PipelineOptions pipeline{.ranges = {{0, 2}, {2, 4}}, .sequences = 2};
  GenerationOptions options;
  options.n_predict = 6;
  auto later = std::async(std::launch::async, [&] {
    PipelineRank rank(*second, model, rank_options(2), pipeline);
    for (int i = 0; i < 3; ++i) rank.generate(sampled_params(), kPrompt, options);
    return rank.session().position();
  });
  PipelineRank rank(*first, model, rank_options(2), pipeline);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rank.generate(sampled_params(), kPrompt, options), expected) << i;
  EXPECT_EQ(later.get(), 0);
}

TEST(PipelineGenerationHops, EveryHopIsMeasuredAndEveryFrameReported) {
  const test::TempDir dir;
  const Model model = synth_layers(dir, "qwen2", 3);
  std::mutex mutex;
  std::vector<exec::HopEvent> hops;
  PipelineOptions pipeline{.ranges = {{0, 1}, {1, 2}, {2, 3}}};
  pipeline.on_hop = [&](const exec::HopEvent& hop) {
    const std::lock_guard lock(mutex);
    hops.push_back(hop);
  };
  test::LoopbackHub hub(3);
  EXPECT_EQ(pipelined(model, pipeline, kGreedy, 5, hub).size(), 5u);
  std::map<std::pair<int, int>, int> links, frames;
  for (const exec::HopEvent& hop : hops) {
    if (std::string(hop.kind) == "link") {
      ++links[{hop.from, hop.to}];
      EXPECT_GT(hop.latency_ns, 0);
      continue;
    }
    ++frames[{hop.from, hop.to}];
    EXPECT_GT(hop.bytes, 0u);
    EXPECT_EQ(std::string(hop.kind), hop.to == 0 ? "token" : "hidden");
  }
  const std::map<std::pair<int, int>, int> each_hop_once = {{{0, 1}, 1}, {{1, 2}, 1}, {{2, 0}, 1}};
  EXPECT_EQ(links, each_hop_once);
  // The prompt in two chunks and four decode steps; five tokens back.
  const std::map<std::pair<int, int>, int> expected_frames = {{{0, 1}, 6}, {{1, 2}, 6}, {{2, 0}, 5}};
  EXPECT_EQ(frames, expected_frames);
}

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
  } catch (const Error& e) {  // whichever rank hears the other first
    const std::string what = e.what();
    EXPECT_TRUE(what.find("stale epoch 1, expected 2") != std::string::npos ||
                what.find("future epoch 2, expected 1") != std::string::npos)
        << what;
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
  EXPECT_THROW(PipelineRank(*endpoint, model, rank_options(), {.ranges = {{0, 2}, {2, 4}}}), Error);
  test::LoopbackHub pair(2);
  auto first = pair.endpoint(0);
  EXPECT_THROW(PipelineRank(*first, model, rank_options(2), {.ranges = {{0, 2}, {2, 4}}, .sequences = 3}),
               Error);  // more sequences than the session's logits rows
}

}  // namespace
}  // namespace synapse::dist
