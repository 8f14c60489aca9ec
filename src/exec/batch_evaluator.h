// What continuous batching (serve/batch_engine.h) needs of the model:
// sequences to fork, rewind and drop, and batched steps that return a
// logits row per entry. A Session in this process is one
// (SessionEvaluator); the first rank of a pipeline is another
// (dist/pipeline_evaluator.h), whose steps run on every rank.
#pragma once

#include <cstdint>
#include <span>

#include "exec/session.h"

namespace synapse::exec {

class BatchEvaluator {
 public:
  virtual ~BatchEvaluator() = default;
  // As Session::eval_batch: each entry's last token's logits, [entries,
  // vocab], valid until the next call; after a throw every sequence is as
  // it was.
  virtual std::span<const float> eval_batch(std::span<const SequenceTokens> batch) = 0;

  // Steps in flight at once: a pipeline's ranks each run one (a step
  // submitted while earlier ones are still on later ranks). One here.
  virtual int depth() const { return 1; }
  // A step whose logits collect() returns, steps coming back in the order
  // they were submitted; at most depth() submitted and not collected. The
  // batch's sequences must not be in another step in flight. Throws as
  // eval_batch, the step then not submitted.
  virtual void submit(std::span<const SequenceTokens> batch) { submitted_ = eval_batch(batch); }
  // The oldest step's logits, [its entries, vocab], valid until the next
  // collect.
  virtual std::span<const float> collect() { return submitted_; }
  virtual SequenceId fork(SequenceId from) = 0;
  virtual void drop(SequenceId id) = 0;
  virtual void rewind(SequenceId id, int64_t position) = 0;

  virtual int64_t vocab() const = 0;
  virtual int64_t chunk() const = 0;
  virtual int64_t max_ctx() const = 0;
  virtual int64_t logits_rows() const = 0;
  // KV memory held, and the bytes of one page (for the server's metrics).
  virtual uint64_t kv_bytes() const = 0;
  virtual uint64_t kv_page_bytes() const = 0;

 private:
  std::span<const float> submitted_;  // one step's, for depth 1
};

class SessionEvaluator final : public BatchEvaluator {
 public:
  explicit SessionEvaluator(Session& session) : session_(session) {}
  std::span<const float> eval_batch(std::span<const SequenceTokens> batch) override {
    return session_.eval_batch(batch);
  }
  SequenceId fork(SequenceId from) override { return session_.fork(from); }
  void drop(SequenceId id) override { session_.drop(id); }
  void rewind(SequenceId id, int64_t position) override { session_.rewind(id, position); }
  int64_t vocab() const override { return session_.vocab(); }
  int64_t chunk() const override { return session_.chunk(); }
  int64_t max_ctx() const override { return session_.max_ctx(); }
  int64_t logits_rows() const override { return session_.scheduler().logits_rows(); }
  uint64_t kv_bytes() const override;
  uint64_t kv_page_bytes() const override { return session_.kv().bytes_for(session_.kv().page_rows()); }

 private:
  Session& session_;
};

}  // namespace synapse::exec
