// The batch engine: continuous batching gives each request the output of its
// solo run, shared prefixes reuse KV pages, cancelled requests free theirs,
// and the queue is bounded.
#include "serve/batch_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "serve/serve_fixture.h"

namespace synapse::serve {
namespace {

using test::ServedTinyModel;

std::vector<int32_t> prompt_of(int i) {
  std::vector<int32_t> tokens(static_cast<size_t>(2 + (i * 7) % 23));
  for (size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int32_t>((i * 41 + t * 13 + 3) % 500);
  return tokens;
}

JobRequest greedy(std::vector<int32_t> prompt, int64_t max_tokens) {
  JobRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temp = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

struct Finished {
  std::vector<int32_t> ids;
  FinishReason reason = FinishReason::None;
  JobUsage usage;
};

Finished wait_for(Job& job) {
  Finished f;
  std::vector<TokenOut> outputs;
  while (!job.take(outputs, std::chrono::milliseconds(50))) {
  }
  for (const TokenOut& t : outputs)
    if (t.id >= 0) f.ids.push_back(t.id);
  f.reason = job.finish_reason();
  f.usage = job.usage();
  return f;
}

Finished run_alone(const JobRequest& request) {
  ServedTinyModel served(1);
  return wait_for(*served.engine->submit(request));
}

TEST(BatchEngine, EachRequestGetsItsSoloOutputWhateverRunsBesideIt) {
  constexpr int kRequests = 8;
  ServedTinyModel served(kRequests);
  std::vector<std::shared_ptr<Job>> jobs;
  // Different prompt lengths and budgets: prefills share steps with decodes,
  // and sequences leave while others run.
  for (int i = 0; i < kRequests; ++i) jobs.push_back(served.engine->submit(greedy(prompt_of(i), 6 + 3 * i)));
  for (int i = 0; i < kRequests; ++i) {
    const Finished together = wait_for(*jobs[static_cast<size_t>(i)]);
    const Finished alone = run_alone(greedy(prompt_of(i), 6 + 3 * i));
    EXPECT_EQ(together.ids, alone.ids) << "request " << i;
    EXPECT_EQ(together.reason, FinishReason::Length);
    EXPECT_EQ(together.usage.completion_tokens, 6 + 3 * i);
  }
}

TEST(BatchEngine, APromptSharingAFinishedRequestsPrefixReusesItsPagesAndGivesTheSameOutput) {
  ServedTinyModel served(2);
  const std::vector<int32_t> first = prompt_of(5);
  const Finished a = wait_for(*served.engine->submit(greedy(first, 10)));
  std::vector<int32_t> second = first;
  second.insert(second.end(), a.ids.begin(), a.ids.begin() + 4);  // a chat's next turn
  second.push_back(7);
  const Finished b = wait_for(*served.engine->submit(greedy(second, 8)));
  EXPECT_EQ(b.usage.cached_tokens, static_cast<int64_t>(first.size() + 4));
  EXPECT_EQ(b.ids, run_alone(greedy(second, 8)).ids);
  EXPECT_EQ(served.metrics.cached_prompt_tokens.load(), first.size() + 4);
}

TEST(BatchEngine, ACancelledRequestEndsAndFreesItsPages) {
  ServedTinyModel served(2);
  std::shared_ptr<Job> job = served.engine->submit(greedy(prompt_of(3), -1));
  std::vector<TokenOut> outputs;
  while (outputs.size() < 3) job->take(outputs, std::chrono::milliseconds(50));
  job->cancel();
  const Finished f = wait_for(*job);
  EXPECT_EQ(f.reason, FinishReason::Cancelled);
  EXPECT_LT(f.usage.completion_tokens, 1000);  // not run to the end of the context
  // The loop publishes the pages after the step that dropped the sequence.
  for (int i = 0; i < 100 && served.metrics.kv_pages.load() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(served.metrics.kv_pages.load(), 0u);
  EXPECT_EQ(served.metrics.processing.load(), 0);
}

TEST(BatchEngine, AFullQueueRefusesRequests) {
  ServedTinyModel served(/*slots=*/1, /*queue_capacity=*/1);
  std::vector<std::shared_ptr<Job>> accepted;
  int refused = 0;
  for (int i = 0; i < 3; ++i) {
    std::shared_ptr<Job> job = served.engine->submit(greedy(prompt_of(i), -1));
    if (job) accepted.push_back(job);
    else ++refused;
  }
  EXPECT_GE(refused, 1);  // one slot and one place in the queue
  for (const auto& job : accepted) job->cancel();
  for (const auto& job : accepted) wait_for(*job);
}

TEST(BatchEngine, ShutdownEndsRunningAndQueuedRequests) {
  ServedTinyModel served(1, 4);
  std::shared_ptr<Job> running = served.engine->submit(greedy(prompt_of(1), -1));
  std::shared_ptr<Job> queued = served.engine->submit(greedy(prompt_of(2), -1));
  served.engine->shutdown();
  EXPECT_EQ(wait_for(*running).reason, FinishReason::Shutdown);
  EXPECT_EQ(wait_for(*queued).reason, FinishReason::Shutdown);
  EXPECT_EQ(served.engine->submit(greedy(prompt_of(3), 4)), nullptr);
}

TEST(BatchEngine, ARequestPastItsDeadlineEndsWithATimeout) {
  ServedTinyModel served(1);
  JobRequest request = greedy(prompt_of(2), -1);
  request.deadline = Clock::now() + std::chrono::milliseconds(30);
  const Finished f = wait_for(*served.engine->submit(request));
  EXPECT_EQ(f.reason, FinishReason::Timeout);
  EXPECT_LT(f.usage.completion_tokens, 1000);  // ended well before the context filled
}

TEST(BatchEngine, RefusesAPromptTheContextCannotHoldOrIdsOutsideTheVocabulary) {
  ServedTinyModel served(1, 4, /*max_ctx=*/64);
  EXPECT_THROW(served.engine->submit(greedy(std::vector<int32_t>(64, 5), 4)), Error);
  EXPECT_THROW(served.engine->submit(greedy({1, 100000}, 4)), Error);
  EXPECT_THROW(served.engine->submit(greedy({}, 4)), Error);
}

TEST(BatchEngine, AGenerationStopsWhenTheContextIsFull) {
  ServedTinyModel served(1, 4, /*max_ctx=*/32);
  const Finished f = wait_for(*served.engine->submit(greedy(prompt_of(4), -1)));
  EXPECT_EQ(f.reason, FinishReason::Length);
  EXPECT_EQ(static_cast<int64_t>(prompt_of(4).size()) + f.usage.completion_tokens, 32);
}

}  // namespace
}  // namespace synapse::serve
