// Continuous batching (the serve issue): one loop owns the session and, each
// step, admits queued requests into free slots, then evaluates every active
// sequence in one batched pass: one token of each decoding sequence and as
// much of the prefilling prompts as the step's token budget leaves. A
// sequence's logits are the same bits whatever shares its step (the
// session's guarantee), so a request's greedy output does not depend on the
// load.
//
// A pipelined model (dist/pipeline_evaluator.h) takes several steps at
// once: the active sequences are then split among that many steps in
// flight, each submitted as soon as its sequences are back, so every rank
// works on one.
//
// Prefix reuse: a new request whose prompt begins with tokens a live or
// recently finished sequence holds forks that sequence (sharing its KV
// pages) and evaluates only the rest. Finished sequences stay cached, as
// many as there are slots, until a newer one or a memory shortage evicts
// them; cancelled ones free their pages at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/batch_evaluator.h"
#include "serve/job.h"
#include "serve/metrics.h"
#include "tokenizer/tokenizer.h"

namespace synapse::serve {

struct EngineOptions {
  int slots = 4;                // sequences evaluated together (--parallel)
  size_t queue_capacity = 64;   // requests that may wait for a slot
  std::vector<int32_t> end_ids;  // tokens that end a generation (EOS, end of turn)
};

class BatchEngine {
 public:
  // The model's evaluator must plan at least options.slots logits rows, and
  // it, the tokenizer and the metrics must outlive the engine. Starts the
  // loop, which alone calls the evaluator from then on.
  BatchEngine(exec::BatchEvaluator& model, const Tokenizer& tokenizer, ServerMetrics& metrics, EngineOptions options);
  ~BatchEngine();  // shutdown()
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  // Queues a request; null when the queue is full. The prompt must be
  // non-empty, its ids in the vocabulary and shorter than the context.
  std::shared_ptr<Job> submit(JobRequest request);
  // Ends every queued and running job (FinishReason::Shutdown) and stops
  // the loop; idempotent.
  void shutdown();

  int slots() const { return options_.slots; }

 private:
  struct Active;
  struct Cached {
    exec::SequenceId sequence;
    std::vector<int32_t> tokens;  // what its KV pages hold
  };

  void loop();
  void admit(std::shared_ptr<Job> job);
  // The sequence a prompt starts from: a fork of the sequence sharing its
  // longest prefix (that prefix kept), or a new empty one.
  exec::SequenceId start_sequence(const std::vector<int32_t>& prompt, int64_t& reused);
  void step();
  // Submits a step of sequences not in flight (decoding ones first, then
  // prompts in order of arrival) within the step's token budget and at
  // most `entries` of them; false when there is none or it failed.
  bool submit(size_t entries);
  // Collects the oldest step in flight and advances its sequences.
  void collect();
  // Samples the token after `row` for a sequence whose pending tokens were
  // all evaluated, and says in the sequence whether that ends it.
  void advance(Active& a, std::span<const float> row);
  // Ends a job: its sequence is cached (finished normally) or dropped.
  void retire(size_t index, FinishReason reason, const std::string& error = {});
  void cache(exec::SequenceId sequence, std::vector<int32_t> tokens);
  void drop_cached();
  // After the model failed in a way a step cannot recover from (a pipeline
  // rank gone): every running request ends with the error, and the
  // engine's sequences are forgotten.
  void abandon(const std::string& error);
  void publish_kv();

  exec::BatchEvaluator& session_;  // the loop's alone once it runs
  const int64_t max_ctx_;   // the session's, for submit() on other threads
  const int64_t vocab_;
  const Tokenizer& tokenizer_;
  ServerMetrics& metrics_;
  const EngineOptions options_;

  std::mutex mutex_;  // guards queue_ and stop_
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;

  // The loop's own state.
  std::vector<std::unique_ptr<Active>> active_;
  std::deque<Cached> cached_;  // oldest first
  // Steps in flight, oldest first, in a ring of the model's depth() sized
  // once: each one's batch and the sequence each entry steps.
  struct Step {
    std::vector<exec::SequenceTokens> batch;
    std::vector<Active*> owners;
  };
  std::vector<Step> steps_;
  size_t oldest_ = 0;
  size_t in_flight_ = 0;
  std::thread thread_;
};

}  // namespace synapse::serve
