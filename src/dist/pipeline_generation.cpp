#include "dist/pipeline_generation.h"

#include <algorithm>
#include <deque>
#include <string>

#include "dist/stage_step.h"
#include "ir/fingerprint.h"
#include "synapse/error.h"

namespace synapse::dist {
namespace {

class FirstStage {
 public:
  FirstStage(StageLink& link, exec::Session& stage, const PipelineOptions& pipeline, const GenerationOptions& options,
             int64_t limit)
      : link_(link), stage_(stage), options_(options), limit_(limit), out_(static_cast<size_t>(pipeline.sequences)),
        done_(out_.size(), limit <= 0) {
    const int micro = pipeline.micro_batches > 0 ? pipeline.micro_batches : link.last() + 1;
    micro_batches_ = std::clamp(micro, 1, pipeline.sequences);
  }

  std::vector<std::vector<int32_t>> run(std::span<const int32_t> prompt) {
    if (limit_ > 0) {
      prefill(prompt);
      for (int m = 0; m < micro_batches_; ++m) launch(m);
      while (!in_flight_.empty()) {
        const int m = in_flight_.front();
        in_flight_.pop_front();
        take(link_.receive(link_.last()));
        launch(m);
      }
    }
    link_.send(1, {.kind = FrameKind::Stop}, {}, {}, {});
    return std::move(out_);
  }

 private:
  // The prompt in chunks on sequence 0; the last asks for a token of each
  // sequence, forking the others from it.
  void prefill(std::span<const int32_t> prompt) {
    const auto forks = static_cast<uint32_t>(out_.size() - 1);
    for (size_t done = 0; done < prompt.size();) {
      const size_t count = std::min(prompt.size() - done, static_cast<size_t>(stage_.chunk()));
      step_.clear();
      step_.add(stage_, 0, prompt.subspan(done, count));
      done += count;
      const bool end = done == prompt.size();
      evaluate_and_send({.kind = FrameKind::Hidden, .wants_token = end, .forks = end ? forks : 0});
    }
    fork_sequences(stage_, forks);
    take(link_.receive(link_.last()));
  }

  // Micro-batch m (sequences m, m + M, ...) steps each unfinished sequence
  // by the token it was last given.
  void launch(int m) {
    step_.clear();
    for (size_t i = static_cast<size_t>(m); i < out_.size(); i += static_cast<size_t>(micro_batches_))
      if (!done_[i]) step_.add(stage_, static_cast<exec::SequenceId>(i), std::span<const int32_t>(&out_[i].back(), 1));
    if (step_.entries.empty()) return;
    evaluate_and_send({.kind = FrameKind::Hidden, .wants_token = true});
    in_flight_.push_back(m);
  }

  void evaluate_and_send(const FrameHeader& header) {
    const std::span<const float> hidden = stage_.eval_batch(step_.sequences());
    link_.send(1, header, step_.entries, step_.tokens, hidden);
  }

  // The tokens the last rank sampled: emitted, and each sequence ends at
  // the limit or a stop token.
  void take(const Frame& reply) {
    if (reply.header.kind != FrameKind::Token || reply.tokens.size() != reply.entries.size())
      throw Error(ErrorKind::InvalidValue, "pipeline: the last rank sent no tokens");
    for (size_t e = 0; e < reply.entries.size(); ++e) {
      const auto i = static_cast<size_t>(reply.entries[e].sequence);
      if (i >= out_.size() || done_[i])
        throw Error(ErrorKind::InvalidValue, "pipeline: a token for sequence " + std::to_string(i) + ", not running");
      const int32_t token = reply.tokens[e];
      out_[i].push_back(token);
      if (out_.size() == 1 && options_.on_token) options_.on_token(token);
      done_[i] = static_cast<int64_t>(out_[i].size()) >= limit_ ||
                 std::find(options_.stop_tokens.begin(), options_.stop_tokens.end(), token) !=
                     options_.stop_tokens.end();
    }
  }

  StageLink& link_;
  exec::Session& stage_;
  const GenerationOptions& options_;
  const int64_t limit_;
  int micro_batches_ = 1;
  std::vector<std::vector<int32_t>> out_;
  std::vector<bool> done_;
  std::deque<int> in_flight_;  // micro-batches sent, in the order their tokens come back
  StageStep step_;
};

class LaterStage {
 public:
  LaterStage(StageLink& link, exec::Session& stage, const SamplingParams& sampling)
      : link_(link), stage_(stage), sampling_(sampling), last_(link.rank() == link.last()) {
    samplers_.emplace_back(sampling, static_cast<int32_t>(stage.vocab()));
  }

  // Runs its layers on each frame until the first rank stops; the last
  // samples where the first asks for tokens (accepting every token it is
  // given first, as the single-process loop accepts the prompt and each
  // token it emits).
  void run() {
    while (true) {
      const Frame in = link_.receive(link_.rank() - 1);
      if (in.header.kind == FrameKind::Stop) {
        if (!last_) link_.send(link_.rank() + 1, {.kind = FrameKind::Stop}, {}, {}, {});
        return;
      }
      step_.load(in, stage_, link_.rank() - 1);
      const std::span<const float> out = stage_.eval_batch(step_.sequences(), in.hidden);
      if (last_) accept(in);
      fork_sequences(stage_, in.header.forks);
      held_ += in.header.forks;
      if (!last_) {
        link_.send(link_.rank() + 1, {.kind = FrameKind::Hidden, .wants_token = in.header.wants_token,
                                      .forks = in.header.forks},
                   in.entries, in.tokens, out);
        continue;
      }
      if (in.header.wants_token) sample(in, out);
    }
  }

 private:
  void accept(const Frame& in) {
    for (size_t e = 0, at = 0; e < in.entries.size(); at += in.entries[e].tokens, ++e) {
      const auto id = static_cast<size_t>(in.entries[e].sequence);
      for (uint32_t t = 0; t < in.entries[e].tokens; ++t) {
        samplers_[id].accept(in.tokens[at + t]);
        if (held_ == 1) history_.push_back(in.tokens[at + t]);
      }
    }
    // A fork samples with its own seed, from the history it shares.
    for (uint32_t f = 1; f <= in.header.forks; ++f) {
      SamplingParams own = sampling_;
      if (sampling_.seed) own.seed = *sampling_.seed + f;
      samplers_.emplace_back(own, static_cast<int32_t>(stage_.vocab()));
      for (int32_t t : history_) samplers_.back().accept(t);
    }
  }

  void sample(const Frame& in, std::span<const float> logits) {
    const auto vocab = static_cast<size_t>(stage_.vocab());
    std::vector<FrameEntry> entries;
    std::vector<int32_t> tokens;
    if (in.header.forks > 0) {  // the prompt's end: every sequence samples from its one row
      for (size_t i = 0; i < samplers_.size(); ++i) {
        entries.push_back({static_cast<int32_t>(i), 1, stage_.position(0)});
        tokens.push_back(samplers_[i].sample(logits.first(vocab)));
      }
    } else {
      for (size_t e = 0; e < in.entries.size(); ++e) {
        const exec::SequenceId id = in.entries[e].sequence;
        entries.push_back({id, 1, stage_.position(id)});
        tokens.push_back(samplers_[static_cast<size_t>(id)].sample(logits.subspan(e * vocab, vocab)));
      }
    }
    link_.send(0, {.kind = FrameKind::Token}, entries, tokens, {});
  }

  StageLink& link_;
  exec::Session& stage_;
  const SamplingParams& sampling_;
  const bool last_;
  std::vector<Sampler> samplers_;  // the last rank's, by sequence
  std::vector<int32_t> history_;   // what sequence 0 accepted before it forked
  size_t held_ = 1;                // sequences: 0 and the forks made so far
  StageStep step_;
};

}  // namespace

uint64_t plan_fingerprint(const Model& model, const PipelineOptions& options) {
  const auto graph = ir::fingerprint(model.graph);
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the graph digest, the ranges and the wire
  const auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (uint8_t b : graph) mix(b);
  for (const exec::StageRange& r : options.ranges) {
    mix(r.first_layer);
    mix(r.end_layer);
  }
  mix(static_cast<uint64_t>(options.wire));
  return h;
}

namespace {

exec::SessionOptions stage_options(exec::SessionOptions options, const Transport& transport,
                                   const PipelineOptions& pipeline) {
  if (transport.size() < 2 || pipeline.ranges.size() != static_cast<size_t>(transport.size()))
    throw Error(ErrorKind::Usage, "a pipeline of " + std::to_string(pipeline.ranges.size()) + " stages on " +
                                      std::to_string(transport.size()) + " ranks: one stage per rank, two at least");
  if (pipeline.sequences < 1 || pipeline.sequences > options.logits_rows)
    throw Error(ErrorKind::InvalidValue, std::to_string(pipeline.sequences) +
                                             " pipelined sequences; the session plans 1.." +
                                             std::to_string(options.logits_rows));
  options.stage = pipeline.ranges[static_cast<size_t>(transport.rank())];
  return options;
}

}  // namespace

PipelineRank::PipelineRank(Transport& transport, const Model& model, exec::SessionOptions session_options,
                           const PipelineOptions& pipeline)
    : transport_(transport),
      pipeline_(pipeline),
      stage_(model, stage_options(std::move(session_options), transport, pipeline)),
      link_(transport, {pipeline.session, pipeline.epoch, plan_fingerprint(model, pipeline)}, pipeline.wire,
            pipeline.timeout, pipeline.on_hop) {
  if (pipeline.on_region) stage_.scheduler().set_listener(pipeline.on_region);
  link_.measure_hops();
}

std::vector<std::vector<int32_t>> PipelineRank::generate(const SamplingParams& sampling,
                                                         std::span<const int32_t> prompt,
                                                         const GenerationOptions& options) {
  // Every rank checks the prompt, so a bad one fails them all alike.
  const int64_t limit = generation_limit(stage_, prompt, options.n_predict);
  std::vector<std::vector<int32_t>> out;
  if (transport_.rank() == 0) {
    out = FirstStage(link_, stage_, pipeline_, options, limit).run(prompt);
  } else {
    LaterStage(link_, stage_, sampling).run();
  }
  if (limit > 0)  // the prompt's end forked the other sequences
    for (exec::SequenceId id = 1; id < pipeline_.sequences; ++id) stage_.drop(id);
  stage_.reset();
  return out;
}

}  // namespace synapse::dist
