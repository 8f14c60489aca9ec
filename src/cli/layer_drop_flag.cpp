#include "cli/layer_drop_flag.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "exec/layer_drop.h"

namespace synapse::cli {

void add_drop_layers_flag(CLI::App& app, std::string& layers) {
  app.add_option("--drop-layers", layers,
                 "run without these layers (comma list, 0-based), trading quality for speed and memory: "
                 "their weights are never read and their KV never allocated (QualityBounded)");
}

void apply_drop_layers(const std::string& layers, exec::SessionOptions& options) {
  if (!layers.empty()) options.drop_layers = exec::parse_layer_list(layers);
}

void report_numerical_mode(const exec::Session& session) {
  const std::string mode = session.scheduler().layer_drop().mode();
  if (!mode.empty()) std::fprintf(stderr, "numerical mode: %s\n", mode.c_str());
}

}  // namespace synapse::cli
