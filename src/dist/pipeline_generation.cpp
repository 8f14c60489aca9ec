#include "dist/pipeline_generation.h"

#include <algorithm>
#include <cstring>

#include "ir/fingerprint.h"
#include "synapse/error.h"

namespace synapse::dist {
namespace {

// One rank's end of the pipeline: its stage session and the frames it
// sends and checks.
class StageLink {
 public:
  StageLink(Transport& transport, const Model& model, const PipelineOptions& pipeline)
      : transport_(transport),
        pipeline_(pipeline),
        expect_{pipeline.session, pipeline.epoch, plan_fingerprint(model, pipeline)} {}

  int rank() const { return transport_.rank(); }
  int last() const { return transport_.size() - 1; }

  void send(int to, FrameKind kind, std::span<const int32_t> tokens, std::span<const float> hidden, uint32_t width,
            int64_t position, bool wants_token) {
    FrameHeader h;
    h.kind = kind;
    h.wire = pipeline_.wire;
    h.wants_token = wants_token;
    h.session = expect_.session;
    h.epoch = expect_.epoch;
    h.step = step_++;
    h.position = position;
    h.tokens = static_cast<uint32_t>(tokens.size());
    h.width = width;
    h.plan = expect_.plan;
    transport_.send(to, encode_frame(h, tokens, hidden), pipeline_.timeout);
  }

  Frame receive(int from) { return decode_frame(transport_.receive(from, pipeline_.timeout), expect_); }

 private:
  Transport& transport_;
  const PipelineOptions& pipeline_;
  FrameExpectation expect_;
  uint64_t step_ = 0;
};

// The first rank: evaluates the prompt chunk by chunk, then each token the
// last rank sends back, until the limit or a stop token.
std::vector<int32_t> run_first(StageLink& link, exec::Session& stage, std::span<const int32_t> prompt,
                               const GenerationOptions& options) {
  const int64_t limit = generation_limit(stage, prompt, options.n_predict);
  std::vector<int32_t> out;
  std::vector<int32_t> pending(prompt.begin(), prompt.end());
  const auto width = static_cast<uint32_t>(stage.hidden_width());
  while (static_cast<int64_t>(out.size()) < limit) {
    for (size_t done = 0; done < pending.size();) {
      const size_t count = std::min(pending.size() - done, static_cast<size_t>(stage.chunk()));
      const std::span<const int32_t> chunk = std::span<const int32_t>(pending).subspan(done, count);
      const int64_t position = stage.position();
      const std::span<const float> hidden = stage.eval_stage(chunk, {});
      done += count;
      link.send(1, FrameKind::Hidden, chunk, hidden, width, position, done == pending.size());
    }
    const Frame reply = link.receive(link.last());
    if (reply.header.kind != FrameKind::Token || reply.tokens.size() != 1)
      throw Error(ErrorKind::InvalidValue, "pipeline: the last rank sent no token");
    const int32_t token = reply.tokens[0];
    out.push_back(token);
    if (options.on_token) options.on_token(token);
    if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end()) break;
    pending.assign(1, token);
  }
  link.send(1, FrameKind::Stop, {}, {}, 0, stage.position(), false);
  return out;
}

// A later rank: runs its layers on each frame; the last samples where the
// first asks for a token (accepting every token it is given first, as the
// single-process loop accepts the prompt and each token it emits).
void run_later(StageLink& link, exec::Session& stage, Sampler& sampler) {
  const bool last = link.rank() == link.last();
  const auto width = static_cast<uint32_t>(stage.hidden_width());
  while (true) {
    const Frame in = link.receive(link.rank() - 1);
    if (in.header.kind == FrameKind::Stop) {
      if (!last) link.send(link.rank() + 1, FrameKind::Stop, {}, {}, 0, in.header.position, false);
      return;
    }
    if (in.header.kind != FrameKind::Hidden || in.header.width != width || in.header.position != stage.position())
      throw Error(ErrorKind::InvalidValue, "pipeline: rank " + std::to_string(link.rank() - 1) +
                                               " sent a frame for position " + std::to_string(in.header.position) +
                                               " of width " + std::to_string(in.header.width) + "; this stage is at " +
                                               std::to_string(stage.position()) + ", width " + std::to_string(width));
    const std::span<const float> out = stage.eval_stage(in.tokens, in.hidden);
    if (!last) {
      link.send(link.rank() + 1, FrameKind::Hidden, in.tokens, out, width, in.header.position, in.header.wants_token);
      continue;
    }
    for (int32_t token : in.tokens) sampler.accept(token);
    if (!in.header.wants_token) continue;
    const int32_t token = sampler.sample(out);
    link.send(0, FrameKind::Token, std::span<const int32_t>(&token, 1), {}, 0, stage.position(), false);
  }
}

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

std::vector<int32_t> run_pipeline_generation(Transport& transport, const Model& model,
                                             exec::SessionOptions session_options, const PipelineOptions& pipeline,
                                             const SamplingParams& sampling, std::span<const int32_t> prompt,
                                             const GenerationOptions& options) {
  if (transport.size() < 2 || pipeline.ranges.size() != static_cast<size_t>(transport.size()))
    throw Error(ErrorKind::Usage, "a pipeline of " + std::to_string(pipeline.ranges.size()) + " stages on " +
                                      std::to_string(transport.size()) + " ranks: one stage per rank, two at least");
  session_options.stage = pipeline.ranges[static_cast<size_t>(transport.rank())];
  exec::Session stage(model, session_options);
  StageLink link(transport, model, pipeline);
  if (transport.rank() == 0) return run_first(link, stage, prompt, options);
  Sampler sampler(sampling, static_cast<int32_t>(stage.vocab()));
  run_later(link, stage, sampler);
  return {};
}

}  // namespace synapse::dist
