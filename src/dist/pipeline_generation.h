// Generation across pipeline stages (SPEC §11): each rank runs its stage of
// the model (exec/pipeline_stage.h); per step the first rank embeds and runs
// its layers and sends a frame on, each rank runs its layers on the hidden
// vectors it receives, and the last computes the logits, samples and sends
// the token back to the first, which emits it. Tokens equal the
// single-process run's: the stages compute the model's own operations, and
// the F32 wire hands the hidden vectors on exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "dist/frame.h"
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
};

// What every rank must agree on: the model's graph fingerprint, the ranges
// and the wire.
uint64_t plan_fingerprint(const Model& model, const PipelineOptions& options);

// Runs this rank's stage (session_options.stage is set from the ranges).
// On rank 0 returns the generated tokens (calling options.on_token as each
// comes), elsewhere nothing. Throws Error(Usage) when the ranks and ranges
// differ in number; Error(Io) when a rank sends nothing within the timeout
// (naming it); Error(InvalidValue) for a frame of another plan or epoch.
std::vector<int32_t> run_pipeline_generation(Transport& transport, const Model& model,
                                             exec::SessionOptions session_options, const PipelineOptions& pipeline,
                                             const SamplingParams& sampling, std::span<const int32_t> prompt,
                                             const GenerationOptions& options);

}  // namespace synapse::dist
