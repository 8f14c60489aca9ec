// One IR node on the reference ops: the single op-by-op implementation that
// the interpreter and the reference region kernel share.
#pragma once

#include "exec/step_context.h"
#include "ir/region.h"

namespace synapse::exec {

// Runs node `id`: reads its operands from ctx.values and writes its result
// into the result's bound buffer, setting the result's extent. A result is
// absent when an operand is absent, except for Merge, which tolerates absent
// alternatives. Entry nodes do nothing (the caller binds entry inputs).
void run_node(StepContext& ctx, ir::NodeId id);

// A node of a region that is not run this step: its result is absent, except
// a Bypass output, which takes the bypass input's value.
void skip_node(StepContext& ctx, ir::NodeId id, const ir::SkipSemantics& skip);

}  // namespace synapse::exec
