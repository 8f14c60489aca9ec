// Step buffers planned once from value lifetimes (SPEC §6): every value gets
// an offset in one float arena sized for the most tokens a step takes; values
// whose lifetimes do not overlap share space, so a step allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"

namespace synapse::exec {

struct BufferPlan {
  static constexpr uint64_t kNoBuffer = UINT64_MAX;
  // Per ValueId: offset in floats, or kNoBuffer for entry inputs and state
  // views (they live elsewhere).
  std::vector<uint64_t> offsets;
  uint64_t arena_floats = 0;
};

// Lifetimes are counted in regions of `order` (the schedule): a value lives
// from its producer's region to the last region that uses it (to the end for
// graph outputs). Whole regions, not single nodes, so a fused kernel may
// write its outputs before it has read all of its inputs. The logits get
// room for max_logits_rows rows (at most max_tokens): a step computes them
// for the tokens whose logits it returns only.
BufferPlan plan_buffers(const ir::Graph& graph, std::span<const ir::RegionId> order, int64_t max_tokens,
                        int64_t max_logits_rows);

}  // namespace synapse::exec
