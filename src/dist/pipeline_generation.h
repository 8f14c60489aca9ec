// Generation across pipeline stages (SPEC §11): each rank runs its stage of
// the model (exec/pipeline_stage.h); per step the first rank embeds and runs
// its layers and sends a frame on, each rank runs its layers on the hidden
// vectors it receives, and the last computes the logits, samples and sends
// the tokens back to the first, which emits them. Tokens equal the
// single-process run's: the stages compute the model's own operations, and
// the F32 wire hands the hidden vectors on exactly.
//
// Several sequences (run --parallel) decode in micro-batches, one per rank
// by default: while the last rank samples one micro-batch, the ranks before
// it run the others, so every rank works at once and throughput grows with
// the ranks instead of only the capacity.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "dist/frame.h"
#include "dist/stage_link.h"
#include "dist/transport.h"
#include "exec/pipeline_stage.h"
#include "exec/session.h"
#include "generate/generation.h"
#include "generate/sampler.h"
#include "model/model.h"

namespace synapse::dist {

struct PipelineOptions {
  std::vector<exec::StageRange> ranges;  // rank r runs ranges[r]
  Wire wire = Wire::F32;
  // How long a rank waits for the one before it (or the first for the
  // last) before it gives up on it.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  uint64_t session = 1;
  uint32_t epoch = 1;
  // Continuations of the prompt decoded together (as generate_parallel),
  // and the micro-batches they are split into (0: one per rank, at most
  // one per sequence).
  int sequences = 1;
  int micro_batches = 0;
  // What this rank's stage runs and receives, for a trace (either may be
  // empty).
  exec::RegionListener on_region = nullptr;
  HopListener on_hop = nullptr;
};

// What every rank must agree on: the model's graph fingerprint, the ranges
// and the wire.
uint64_t plan_fingerprint(const Model& model, const PipelineOptions& options);

// This rank's stage of a pipeline, for one generation after another (a
// benchmark's repetitions): its session (session_options.stage is set from
// the ranges; it must plan a logits row per sequence) and its link to the
// others, its hops measured once. Throws Error(Usage) when the ranks and
// ranges differ in number, Error(InvalidValue) for more sequences than the
// session's logits rows, and the errors of a first exchange as generate().
class PipelineRank {
 public:
  PipelineRank(Transport& transport, const Model& model, exec::SessionOptions session_options,
               const PipelineOptions& pipeline);

  // One generation, which every rank runs with the same arguments; the
  // stage is empty again afterwards. On rank 0 returns each sequence's
  // generated tokens, calling options.on_token as each comes when there is
  // one sequence; elsewhere nothing. Continuation i samples with
  // sampling.seed + i when a seed is given. Throws Error(Io) when a rank
  // sends nothing within the timeout (naming it); Error(InvalidValue) for a
  // frame of another plan or epoch, or a prompt the context cannot hold.
  std::vector<std::vector<int32_t>> generate(const SamplingParams& sampling, std::span<const int32_t> prompt,
                                             const GenerationOptions& options);

  exec::Session& session() { return stage_; }
  StageLink& link() { return link_; }
  bool first() const { return transport_.rank() == 0; }
  bool last() const { return transport_.rank() == transport_.size() - 1; }

 private:
  Transport& transport_;
  const PipelineOptions pipeline_;
  exec::Session stage_;
  StageLink link_;
};

}  // namespace synapse::dist
