// Models for the execution tests: a graph plus seeded random weights,
// encoded as each weight's descriptor says, in a mapped temporary file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "model/model.h"

namespace synapse::exec::testing {

// Matrices get values in [-1, 1), vectors (norm weights) 1 +- 0.25; a weight
// named in `fixed` gets exactly those values instead. Descriptor offsets and
// lengths are rewritten to the file's layout.
Model make_model(ir::Graph graph, uint32_t seed = 1, const std::map<std::string, std::vector<float>>& fixed = {});

}  // namespace synapse::exec::testing
