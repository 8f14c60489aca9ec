// --drop-layers 10,11 (run, bench, serve, perplexity): run without those
// layers, a QualityBounded session (exec/layer_drop.h). Commands that take
// it say the numerical mode wherever they report results.
#pragma once

#include <string>

#include "exec/session.h"

namespace CLI {
class App;
}

namespace synapse::cli {

void add_drop_layers_flag(CLI::App& app, std::string& layers);

// Sets options.drop_layers from the flag's text. Throws Error(Usage) for
// anything but comma-separated layer numbers.
void apply_drop_layers(const std::string& layers, exec::SessionOptions& options);

// On stderr, when the session drops layers: "numerical mode: QualityBounded
// (layers 10, 11 dropped)".
void report_numerical_mode(const exec::Session& session);

}  // namespace synapse::cli
