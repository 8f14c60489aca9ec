// One IR node: the single op-by-op implementation that the interpreter and
// every region kernel share; the heavy ops go through the kernel's OpSet.
#pragma once

#include "exec/op_set.h"
#include "exec/step_context.h"
#include "ir/region.h"

namespace synapse::exec {

// Runs node `id`: reads its operands from ctx.values and writes its result
// into the result's bound buffer, setting the result's extent. A result is
// absent when an operand is absent, except for Merge, which tolerates absent
// alternatives. Entry nodes do nothing (the caller binds entry inputs).
// Matrix products and attention run on `ops`.
void run_node(StepContext& ctx, ir::NodeId id, const OpSet& ops = reference_ops());

// The first half of run_node, for a kernel that computes the node itself:
// binds the result's extent and presence; true when it is to be computed.
bool prepare_node(StepContext& ctx, ir::NodeId id);

// A node of a region that is not run this step: its result is absent, except
// a Bypass output, which takes the bypass input's value.
void skip_node(StepContext& ctx, ir::NodeId id, const ir::SkipSemantics& skip);

}  // namespace synapse::exec
