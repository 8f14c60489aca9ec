// The flags of a pipelined run (SPEC §11): under `mpirun -np R
// synapse-mpi`, each rank runs a contiguous range of layers. --split
// bytes|layer balances weight bytes (the default) or layer counts;
// --ranks-layers 0-11,12-23 gives the ranges; --wire f16 halves the bytes
// between ranks (a numerical mode of its own); --rank-timeout gives up on a
// rank that sends nothing.
#pragma once

#include <string>

#include "dist/pipeline_generation.h"
#include "dist/transport.h"
#include "model/model.h"

namespace CLI {
class App;
}

namespace synapse::cli {

struct PipelineFlags {
  std::string split = "bytes";
  std::string ranks_layers;
  std::string wire = "f32";
  double timeout_s = 120;
};

void add_pipeline_flags(CLI::App& app, PipelineFlags& flags);

// The transport of a run over several ranks, or null for a single process.
// Throws Error(Usage) for --ranks-layers or --wire f16 outside synapse-mpi
// with two ranks at least.
dist::Transport* pipeline_transport(const PipelineFlags& flags);

// The stage ranges, wire and timeout. Throws Error(Usage) for ranges that do
// not fit the model or the ranks.
dist::PipelineOptions pipeline_options(const PipelineFlags& flags, const Model& model, int ranks);

// On stderr: the ranks, each one's layers and the wire; with --wire f16,
// the numerical mode it makes (QualityBounded: the hidden vectors between
// ranks are rounded to F16, so tokens may differ from a single process's).
void report_pipeline(const char* command, const dist::PipelineOptions& options);

}  // namespace synapse::cli
