#include "dist/pipeline_evaluator.h"

#include <string>

#include "synapse/error.h"

namespace synapse::dist {

PipelineEvaluator::PipelineEvaluator(PipelineRank& rank) : rank_(rank), local_(rank.session()) {
  if (!rank.first()) throw Error(ErrorKind::InvalidValue, "a pipelined server's evaluator runs on rank 0");
}

PipelineEvaluator::~PipelineEvaluator() {
  try {
    stop();
  } catch (const Error&) {
    // A rank already gone: the job ends anyway.
  }
}

void PipelineEvaluator::stop() {
  if (stopped_) return;
  stopped_ = true;
  rank_.link().send(1, {.kind = FrameKind::Stop}, {}, {}, {});
}

void PipelineEvaluator::send_operation(FrameKind kind, exec::SequenceId id, int64_t position) {
  const FrameEntry entry{id, 0, position};
  rank_.link().send(1, {.kind = kind}, std::span<const FrameEntry>(&entry, 1), {}, {});
}

exec::SequenceId PipelineEvaluator::fork(exec::SequenceId from) {
  const exec::SequenceId id = local_.fork(from);
  send_operation(FrameKind::Fork, id, from);
  return id;
}

void PipelineEvaluator::drop(exec::SequenceId id) {
  local_.drop(id);
  send_operation(FrameKind::Drop, id, 0);
}

void PipelineEvaluator::rewind(exec::SequenceId id, int64_t position) {
  local_.rewind(id, position);
  send_operation(FrameKind::Rewind, id, position);
}

std::span<const float> PipelineEvaluator::eval_batch(std::span<const exec::SequenceTokens> batch) {
  submit(batch);
  return collect();
}

void PipelineEvaluator::submit(std::span<const exec::SequenceTokens> batch) {
  if (static_cast<int>(in_flight_.size()) >= depth())
    throw Error(ErrorKind::InvalidValue, "pipeline: " + std::to_string(depth()) + " steps in flight already");
  step_.clear();
  for (const exec::SequenceTokens& entry : batch) step_.add(stage(), entry.sequence, entry.tokens);
  // Checked and run here first: a step rank 0 refuses (a full KV budget)
  // never leaves it, and the engine may retry.
  const std::span<const float> hidden = local_.eval_batch(batch);
  rank_.link().send(1, {.kind = FrameKind::Hidden, .wants_token = true}, step_.entries, step_.tokens, hidden);
  in_flight_.push_back(batch.size());
}

std::span<const float> PipelineEvaluator::collect() {
  if (in_flight_.empty()) throw Error(ErrorKind::InvalidValue, "pipeline: no step in flight to collect");
  const size_t entries = in_flight_.front();
  in_flight_.pop_front();
  StageLink& link = rank_.link();
  Frame reply = link.receive(link.last());
  if (reply.header.kind == FrameKind::Failed)  // every rank holds the step's sequences as before it, or drops them
    throw Error(ErrorKind::InvalidValue, "pipeline: " + reply.text);
  if (reply.header.kind != FrameKind::Logits || reply.entries.size() != entries ||
      reply.header.width != static_cast<uint32_t>(vocab()))
    throw Error(ErrorKind::InvalidValue, "pipeline: the last rank did not answer a step with its logits");
  logits_ = std::move(reply.hidden);
  return logits_;
}

namespace {

// A later rank of a pipelined server: each frame from the rank before is a
// sequence operation to do and pass on, a step to run (the last rank
// answering rank 0 with its logits rows), a step an earlier rank failed,
// or the stop.
class LaterServeStage {
 public:
  explicit LaterServeStage(PipelineRank& rank)
      : rank_(rank), link_(rank.link()), stage_(rank.session()), from_(link_.rank() - 1),
        next_(rank.last() ? 0 : link_.rank() + 1) {}

  void run() {
    while (true) {
      const Frame in = link_.receive(from_, /*idle=*/true);
      switch (in.header.kind) {
        case FrameKind::Stop:
          if (!rank_.last()) link_.send(next_, in.header, {}, {}, {});
          return;
        case FrameKind::Fork:
        case FrameKind::Rewind:
        case FrameKind::Drop:
          apply(in);
          if (!rank_.last()) link_.send(next_, in.header, in.entries, {}, {});
          break;
        case FrameKind::Failed:  // a rank before this one could not run the step
          link_.send(next_, in.header, in.entries, in.tokens, {}, in.text);
          break;
        default:
          run_step(in);
      }
    }
  }

 private:
  void apply(const Frame& in) {
    if (in.entries.size() != 1) throw Error(ErrorKind::InvalidValue, "pipeline: a sequence operation of no sequence");
    const FrameEntry& e = in.entries[0];
    if (in.header.kind == FrameKind::Rewind) return stage_.rewind(e.sequence, e.position);
    if (in.header.kind == FrameKind::Drop) return stage_.drop(e.sequence);
    if (stage_.fork(static_cast<exec::SequenceId>(e.position)) != e.sequence)
      throw Error(ErrorKind::InvalidValue, "pipeline: rank " + std::to_string(link_.rank()) +
                                               " numbered a fork unlike rank 0");
  }

  void run_step(const Frame& in) {
    step_.load(in, stage_, from_);
    std::span<const float> out;
    try {
      out = stage_.eval_batch(step_.sequences(), in.hidden);
    } catch (const Error& e) {
      // This stage is as before the step (the session undoes it); the step's
      // requests fail, and rank 0's engine drops their sequences on every
      // rank. The server goes on.
      const std::string why = "rank " + std::to_string(link_.rank()) + ": " + e.what();
      link_.send(next_, {.kind = FrameKind::Failed}, in.entries, in.tokens, {}, why);
      return;
    }
    if (!rank_.last()) {
      link_.send(next_, {.kind = FrameKind::Hidden, .wants_token = true}, in.entries, in.tokens, out);
      return;
    }
    // A logits row per entry, each standing for its entry's last token.
    answer_.clear();
    for (size_t e = 0, at = 0; e < in.entries.size(); at += in.entries[e].tokens, ++e) {
      const exec::SequenceId id = in.entries[e].sequence;
      answer_.add(stage_, id, std::span<const int32_t>(in.tokens).subspan(at + in.entries[e].tokens - 1, 1));
      answer_.entries.back().position = stage_.position(id) - 1;
    }
    link_.send(0, {.kind = FrameKind::Logits}, answer_.entries, answer_.tokens, out);
  }

  PipelineRank& rank_;
  StageLink& link_;
  exec::Session& stage_;
  const int from_;
  const int next_;  // the next rank, or rank 0 for the last
  StageStep step_;
  StageStep answer_;  // the logits frame's entries and tokens
};

}  // namespace

void serve_later_stage(PipelineRank& rank) { LaterServeStage(rank).run(); }

}  // namespace synapse::dist
