// A server over pipeline ranks (mpirun -np R synapse-mpi serve): rank 0
// runs the HTTP server and the batch engine, whose model is this evaluator.
// Each sequence operation (fork, rewind, drop) is done on rank 0's stage
// and sent down the pipeline, so every rank holds the same sequences; each
// step runs rank 0's layers, goes through the others, and the last rank
// sends the logits rows back (F32), where the engine samples them. The
// other ranks run serve_later_stage until rank 0 stops. Up to a step per
// rank is in the pipeline at once (submit, collect).
#pragma once

#include <deque>
#include <vector>

#include "dist/pipeline_generation.h"
#include "dist/stage_step.h"
#include "exec/batch_evaluator.h"

namespace synapse::dist {

class PipelineEvaluator final : public exec::BatchEvaluator {
 public:
  // `rank` is rank 0's, and outlives the evaluator; the destructor stops
  // the other ranks.
  explicit PipelineEvaluator(PipelineRank& rank);
  ~PipelineEvaluator() override;
  PipelineEvaluator(const PipelineEvaluator&) = delete;
  PipelineEvaluator& operator=(const PipelineEvaluator&) = delete;

  std::span<const float> eval_batch(std::span<const exec::SequenceTokens> batch) override;
  // A step per rank in flight: while the later ranks run one, rank 0 runs
  // the next.
  int depth() const override { return rank_.link().last() + 1; }
  void submit(std::span<const exec::SequenceTokens> batch) override;
  std::span<const float> collect() override;
  exec::SequenceId fork(exec::SequenceId from) override;
  void drop(exec::SequenceId id) override;
  void rewind(exec::SequenceId id, int64_t position) override;

  int64_t vocab() const override { return local_.vocab(); }
  int64_t chunk() const override { return local_.chunk(); }
  int64_t max_ctx() const override { return local_.max_ctx(); }
  int64_t logits_rows() const override { return local_.logits_rows(); }
  // Rank 0's KV (its layers'); the other ranks hold theirs alike.
  uint64_t kv_bytes() const override { return local_.kv_bytes(); }
  uint64_t kv_page_bytes() const override { return local_.kv_page_bytes(); }

  // Ends the other ranks' loops; idempotent.
  void stop();

 private:
  exec::Session& stage() const { return rank_.session(); }
  void send_operation(FrameKind kind, exec::SequenceId id, int64_t position);

  PipelineRank& rank_;
  exec::SessionEvaluator local_;  // rank 0's stage: its sequences and layers
  StageStep step_;
  std::deque<size_t> in_flight_;  // the entries of each step submitted, oldest first
  std::vector<float> logits_;
  bool stopped_ = false;
};

// A later rank's side of a pipelined server: runs what rank 0 sends (the
// sequence operations and steps, the last rank answering each step with
// its logits rows) until rank 0 stops. Waits for requests without end.
void serve_later_stage(PipelineRank& rank);

}  // namespace synapse::dist
