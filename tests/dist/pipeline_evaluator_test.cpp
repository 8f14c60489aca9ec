// A server's engine over 2 and 3 pipeline ranks (threads over an in-process
// transport): with a step per rank in flight, each of eight requests,
// prefills beside decodes and sequences leaving while others run, gets the
// tokens its solo run on one process gets.
#include "dist/pipeline_evaluator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "exec/cpu_region_kernel.h"
#include "generate/chat_session.h"
#include "kernels/cpu/cpu_target.h"
#include "serve/batch_engine.h"
#include "support/loopback_transport.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::dist {
namespace {

constexpr int kRequests = 8;

exec::SessionOptions evaluator_options() {
  exec::SessionOptions options;
  options.kernels = exec::cpu_kernel_registry({1, cpu::best_cpu_target()});
  options.logits_rows = kRequests;
  return options;
}

serve::JobRequest request(int i) {
  serve::JobRequest r;
  r.prompt.resize(static_cast<size_t>(2 + (i * 7) % 23));
  for (size_t t = 0; t < r.prompt.size(); ++t) r.prompt[t] = static_cast<int32_t>((i * 41 + t * 13 + 3) % 500);
  r.sampling.temp = 0;
  r.max_tokens = 4 + 3 * i;
  r.ignore_eos = true;
  return r;
}

// Each request's tokens, all submitted at once.
std::vector<std::vector<int32_t>> serve_all(exec::BatchEvaluator& model, const Tokenizer& tokenizer) {
  serve::ServerMetrics metrics;
  serve::EngineOptions options;
  options.slots = kRequests;
  options.end_ids = end_of_turn_ids(tokenizer.vocabulary());
  serve::BatchEngine engine(model, tokenizer, metrics, options);
  std::vector<std::shared_ptr<serve::Job>> jobs;
  for (int i = 0; i < kRequests; ++i) jobs.push_back(engine.submit(request(i)));
  std::vector<std::vector<int32_t>> out;
  for (const auto& job : jobs) {
    std::vector<serve::TokenOut> tokens;
    while (!job->take(tokens, std::chrono::milliseconds(50))) {
    }
    EXPECT_EQ(job->finish_reason(), serve::FinishReason::Length);
    out.emplace_back();
    for (const serve::TokenOut& t : tokens) out.back().push_back(t.id);
  }
  return out;
}

// Rank 0's engine over a pipeline of `ranges`, the other ranks on threads.
std::vector<std::vector<int32_t>> serve_over_ranks(const Model& model, const Tokenizer& tokenizer,
                                                   const std::vector<exec::StageRange>& ranges) {
  const int ranks = static_cast<int>(ranges.size());
  test::LoopbackHub hub(ranks);
  std::vector<std::unique_ptr<test::LoopbackHub::Endpoint>> endpoints;
  for (int r = 0; r < ranks; ++r) endpoints.push_back(hub.endpoint(r));
  const PipelineOptions pipeline{.ranges = ranges, .sequences = kRequests};
  std::vector<std::future<void>> later;
  for (int r = 1; r < ranks; ++r)
    later.push_back(std::async(std::launch::async, [&, r] {
      PipelineRank rank(*endpoints[static_cast<size_t>(r)], model, evaluator_options(), pipeline);
      serve_later_stage(rank);
    }));
  std::vector<std::vector<int32_t>> out;
  {
    PipelineRank rank(*endpoints[0], model, evaluator_options(), pipeline);
    PipelineEvaluator evaluator(rank);
    EXPECT_EQ(evaluator.depth(), ranks);  // a step per rank in flight
    out = serve_all(evaluator, tokenizer);
  }  // the evaluator stops the other ranks
  for (auto& rank : later) rank.get();
  return out;
}

TEST(PipelineEvaluator, AServersRequestsOverRanksGetTheirSingleProcessTokens) {
  const test::TempDir dir;
  const std::string path = test::write_tiny_layers(dir, "qwen2", 4, 9);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  const Model model = load_model(path, LoadOptions{.max_ctx = 256, .chunk = 32});
  exec::Session session(model, evaluator_options());
  exec::SessionEvaluator local(session);
  const std::vector<std::vector<int32_t>> expected = serve_all(local, *tokenizer);
  ASSERT_EQ(expected.back().size(), static_cast<size_t>(request(kRequests - 1).max_tokens));
  EXPECT_EQ(serve_over_ranks(model, *tokenizer, {{0, 2}, {2, 4}}), expected) << "2 ranks";
  EXPECT_EQ(serve_over_ranks(model, *tokenizer, {{0, 1}, {1, 3}, {3, 4}}), expected) << "3 ranks";
}

// A request that rank 1 has no KV memory for fails alone, saying so; the
// server goes on, and the next request gets its single-process tokens.
TEST(PipelineEvaluator, AStepALaterRankCannotRunFailsItsRequestsAndTheServerGoesOn) {
  const test::TempDir dir;
  const std::string path = test::write_tiny_layers(dir, "qwen2", 4, 9);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  const Model model = load_model(path, LoadOptions{.max_ctx = 256, .chunk = 32});
  serve::JobRequest small = request(1);
  exec::Session session(model, evaluator_options());
  exec::SessionEvaluator local(session);
  serve::ServerMetrics metrics;
  serve::BatchEngine alone(local, *tokenizer, metrics, {.slots = 1, .end_ids = {}});
  const std::shared_ptr<serve::Job> expected_job = alone.submit(small);
  std::vector<serve::TokenOut> expected;
  while (!expected_job->take(expected, std::chrono::milliseconds(50))) {
  }

  // Rank 1 (layers 2-3) may hold the KV of a few pages and no more.
  const PipelineOptions pipeline{.ranges = {{0, 2}, {2, 4}}, .sequences = kRequests};
  exec::SessionOptions limited = evaluator_options();
  limited.kv.page_rows = 16;
  limited.memory.kv_positions = 16;
  {
    exec::SessionOptions probe_options = limited;
    probe_options.stage = exec::StageRange{2, 4};
    const exec::Session probe(model, probe_options);
    limited.memory.budget.bytes = probe.memory().ledger.total() + probe.kv().bytes_for(probe.kv().page_rows()) * 2;
  }
  test::LoopbackHub hub(2);
  auto first = hub.endpoint(0);
  auto second = hub.endpoint(1);
  auto later = std::async(std::launch::async, [&] {
    PipelineRank rank(*second, model, limited, pipeline);
    serve_later_stage(rank);
  });
  {
    PipelineRank rank(*first, model, evaluator_options(), pipeline);
    PipelineEvaluator evaluator(rank);
    serve::BatchEngine engine(evaluator, *tokenizer, metrics, {.slots = 2, .end_ids = {}});
    serve::JobRequest long_prompt = request(2);
    long_prompt.prompt.assign(200, 7);
    const std::shared_ptr<serve::Job> failing = engine.submit(long_prompt);
    std::vector<serve::TokenOut> tokens;
    while (!failing->take(tokens, std::chrono::milliseconds(50))) {
    }
    EXPECT_EQ(failing->finish_reason(), serve::FinishReason::Error);
    EXPECT_NE(failing->error().find("rank 1"), std::string::npos) << failing->error();
    EXPECT_NE(failing->error().find("[kv]"), std::string::npos) << failing->error();
    const std::shared_ptr<serve::Job> next = engine.submit(small);
    tokens.clear();
    while (!next->take(tokens, std::chrono::milliseconds(50))) {
    }
    EXPECT_EQ(next->finish_reason(), serve::FinishReason::Length);
    ASSERT_EQ(tokens.size(), expected.size());
    for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i].id, expected[i].id) << i;
  }
  later.get();
}

}  // namespace
}  // namespace synapse::dist
