#include "dist/pipeline_evaluator.h"

#include <string>

#include "synapse/error.h"

namespace synapse::dist {

PipelineEvaluator::PipelineEvaluator(PipelineRank& rank) : rank_(rank) {
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
  const exec::SequenceId id = stage().fork(from);
  send_operation(FrameKind::Fork, id, from);
  return id;
}

void PipelineEvaluator::drop(exec::SequenceId id) {
  stage().drop(id);
  send_operation(FrameKind::Drop, id, 0);
}

void PipelineEvaluator::rewind(exec::SequenceId id, int64_t position) {
  stage().rewind(id, position);
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
  const std::span<const float> hidden = stage().eval_batch(batch);
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

uint64_t PipelineEvaluator::kv_bytes() const { return exec::SessionEvaluator(stage()).kv_bytes(); }
uint64_t PipelineEvaluator::kv_page_bytes() const { return exec::SessionEvaluator(stage()).kv_page_bytes(); }

void serve_later_stage(PipelineRank& rank) {
  StageLink& link = rank.link();
  exec::Session& stage = rank.session();
  const int from = link.rank() - 1;
  StageStep step;
  std::vector<int32_t> last_tokens;
  while (true) {
    const Frame in = link.receive(from, /*idle=*/true);
    const bool operation =
        in.header.kind == FrameKind::Fork || in.header.kind == FrameKind::Rewind || in.header.kind == FrameKind::Drop;
    if (in.header.kind == FrameKind::Stop || operation) {
      if (operation) {
        if (in.entries.size() != 1) throw Error(ErrorKind::InvalidValue, "pipeline: a sequence operation of no sequence");
        const FrameEntry& e = in.entries[0];
        if (in.header.kind == FrameKind::Fork) {
          if (stage.fork(static_cast<exec::SequenceId>(e.position)) != e.sequence)
            throw Error(ErrorKind::InvalidValue, "pipeline: rank " + std::to_string(link.rank()) +
                                                     " numbered a fork unlike rank 0");
        } else if (in.header.kind == FrameKind::Rewind) {
          stage.rewind(e.sequence, e.position);
        } else {
          stage.drop(e.sequence);
        }
      }
      if (!rank.last()) link.send(link.rank() + 1, in.header, in.entries, {}, {});
      if (in.header.kind == FrameKind::Stop) return;
      continue;
    }
    if (in.header.kind == FrameKind::Failed) {  // a rank before this one could not run the step
      link.send(rank.last() ? 0 : link.rank() + 1, in.header, in.entries, in.tokens, {}, in.text);
      continue;
    }
    step.load(in, stage, from);
    std::span<const float> out;
    try {
      out = stage.eval_batch(step.sequences(), in.hidden);
    } catch (const Error& e) {
      // This stage is as before the step (the session undoes it); the step's
      // requests fail, and rank 0's engine drops their sequences on every
      // rank. The server goes on.
      const std::string why = "rank " + std::to_string(link.rank()) + ": " + e.what();
      link.send(rank.last() ? 0 : link.rank() + 1, {.kind = FrameKind::Failed}, in.entries, in.tokens, {}, why);
      continue;
    }
    if (!rank.last()) {
      link.send(link.rank() + 1, {.kind = FrameKind::Hidden, .wants_token = true}, in.entries, in.tokens, out);
      continue;
    }
    // A logits row per entry, each standing for its entry's last token.
    std::vector<FrameEntry> entries;
    last_tokens.clear();
    for (size_t e = 0, at = 0; e < in.entries.size(); at += in.entries[e].tokens, ++e) {
      entries.push_back({in.entries[e].sequence, 1, stage.position(in.entries[e].sequence) - 1});
      last_tokens.push_back(in.tokens[at + in.entries[e].tokens - 1]);
    }
    link.send(0, {.kind = FrameKind::Logits}, entries, last_tokens, out);
  }
}

}  // namespace synapse::dist
