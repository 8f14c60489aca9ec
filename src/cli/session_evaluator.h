// The evaluator the chunked tools (perplexity, imatrix, sensitivity) run a
// model file with, from their flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli/kernel_flags.h"
#include "cli/memory_flags.h"
#include "calibrate/session_evaluator.h"

namespace CLI {
class App;
}

namespace synapse::cli {

// How a chunked tool walks its text: -c tokens per chunk, -b most tokens
// per step, --chunks at most this many chunks (negative: all).
struct ChunkFlags {
  int64_t n_ctx = 512;
  int64_t batch = 512;
  int64_t max_chunks = -1;
};
void add_chunk_flags(CLI::App& app, ChunkFlags& flags);

// The model loaded for chunks of n_ctx tokens in steps of at most `batch`.
Model load_for_chunks(const std::string& path, int64_t n_ctx, int64_t batch);
// Session options from the flags for `model`; drop_layers is --drop-layers'
// text ("" for none).
exec::SessionOptions evaluator_options(const Model& model, const KernelFlags& kernels, const MemoryFlags& memory,
                                       const std::string& drop_layers = "");

// Loads the model for chunks of n_ctx tokens in steps of at most `batch`;
// drop_layers is --drop-layers' text ("" for none), said on stderr when set.
std::unique_ptr<calibrate::SessionEvaluator> open_evaluator(const std::string& path, int64_t n_ctx, int64_t batch,
                                                       const KernelFlags& kernels, const MemoryFlags& memory,
                                                       const std::string& drop_layers = "");

}  // namespace synapse::cli
