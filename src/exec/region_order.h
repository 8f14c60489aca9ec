// The order the scheduler runs regions in: topological over the values and
// state that flow between them, ready regions taken lowest id first.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace synapse::exec {

// Throws Error(InvalidValue) when the dependencies form a cycle.
std::vector<ir::RegionId> region_order(const ir::Graph& graph);

}  // namespace synapse::exec
