#include "cli/pipeline_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "synapse/error.h"

namespace synapse::cli {

void add_pipeline_flags(CLI::App& app, PipelineFlags& flags) {
  const std::string group = "Pipeline (mpirun -np R synapse-mpi)";
  app.add_option("--split", flags.split, "how ranks share the layers: bytes (balance weight bytes) or layer")
      ->check(CLI::IsMember({"bytes", "layer"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--ranks-layers", flags.ranks_layers, "the layers of each rank, as 0-11,12-23 (instead of --split)")
      ->group(group);
  app.add_option("--wire", flags.wire, "hidden vectors between ranks: f32 (exact) or f16")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--rank-timeout", flags.timeout_s, "seconds a rank waits for another before it gives up")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str()
      ->group(group);
}

dist::Transport* pipeline_transport(const PipelineFlags& flags) {
  dist::Transport* transport = dist::process_transport();
  if (transport && transport->size() > 1) return transport;
  if (!flags.ranks_layers.empty() || flags.wire != "f32")
    throw Error(ErrorKind::Usage, "--ranks-layers and --wire split a model over MPI ranks: run `mpirun -np R "
                                  "synapse-mpi run ...` with R >= 2");
  return nullptr;
}

dist::PipelineOptions pipeline_options(const PipelineFlags& flags, const Model& model, int ranks) {
  dist::PipelineOptions options;
  const uint32_t n_layer = exec::layer_count(model.graph);
  options.ranges = flags.ranks_layers.empty()
                       ? exec::split_stages(model.graph, ranks,
                                            flags.split == "layer" ? exec::SplitBy::Layers : exec::SplitBy::Bytes)
                       : exec::parse_stage_ranges(flags.ranks_layers, n_layer);
  if (options.ranges.size() != static_cast<size_t>(ranks))
    throw Error(ErrorKind::Usage, "--ranks-layers gives " + std::to_string(options.ranges.size()) + " ranges for " +
                                      std::to_string(ranks) + " ranks");
  options.wire = flags.wire == "f16" ? dist::Wire::F16 : dist::Wire::F32;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.timeout_s * 1000));
  return options;
}

void report_pipeline(const char* command, const dist::PipelineOptions& options) {
  std::fprintf(stderr, "synapse %s: %zu ranks, layers", command, options.ranges.size());
  for (const exec::StageRange& r : options.ranges) std::fprintf(stderr, " %u-%u", r.first_layer, r.end_layer - 1);
  std::fprintf(stderr, ", wire %s\n", dist::to_string(options.wire));
  if (options.wire == dist::Wire::F16)
    std::fprintf(stderr, "numerical mode: QualityBounded (--wire f16 rounds the hidden vectors between ranks to F16)\n");
}

}  // namespace synapse::cli
