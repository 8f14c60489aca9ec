// Whether a region runs in a step: its RegionActivation's decision, read
// from the step's values.
#pragma once

#include <span>

#include "exec/step_context.h"
#include "ir/region.h"

namespace synapse::exec {

// Always: yes. RouteSlot: some token's gate in column `slot` is non-zero.
// Policy: some element of the policy value is non-zero. A decision value that
// is absent this step selects nothing.
bool region_selected(const ir::RegionActivation& activation, std::span<const TensorRef> values);

}  // namespace synapse::exec
