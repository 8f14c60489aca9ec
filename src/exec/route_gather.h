// MoE prefill (SPEC §6): a routed region runs once per step on the tokens
// its route selects, gathered into contiguous rows, so an expert's weights
// are read once per chunk and no unrouted token is computed. Its outputs
// are scattered back to the step's rows, zero where the route did not
// select the token (the GatedSum gives those rows weight zero).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/kernel_registry.h"
#include "exec/step_context.h"
#include "ir/graph.h"

namespace synapse::exec {

// Moves the first rows.size() rows of x (cols floats each) to rows[i],
// zeroing the others of the step's `tokens` rows. rows must be increasing
// and below tokens (so rows[i] >= i): each row moves to a later one or stays,
// so walking from the last moves every row before it is overwritten.
void scatter_rows(float* x, int64_t cols, std::span<const int64_t> rows, int64_t tokens);

class RouteGather {
 public:
  // Scratch for the widest routed-region input of a chunk, sized once.
  RouteGather(const ir::Graph& graph, int64_t chunk);

  // Runs kernel on the region for the tokens whose gate in the region's
  // RouteSlot column is non-zero. All of them: the kernel runs as is; a
  // region without a RouteSlot, or with an input that is not one F32 row
  // per token, also runs as is.
  void run(StepContext& ctx, const ir::Region& region, RegionKernel& kernel);

 private:
  std::vector<int64_t> rows_;   // the selected tokens
  std::vector<float> gathered_;  // the gathered inputs, one after another
  std::vector<TensorRef> saved_;  // the inputs as the step had them
};

}  // namespace synapse::exec
