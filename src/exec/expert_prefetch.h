// Speculative expert prefetch (SPEC §8): once layer l's router has run,
// layer l+1's router weights are applied to layer l's router input (the
// hidden state one layer early) and the experts they would pick are loaded
// ahead, so their reads overlap layer l's experts and layer l+1's
// attention. Only a guess: the real route decides what runs; a wrong guess
// costs a load, never a change in output. Read from the IR (Router regions,
// their MatMul and TopKRoute, the RouteSlot of each Expert region), so it
// knows no model family.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/step_context.h"
#include "ir/graph.h"
#include "memory/weight_residency.h"

namespace synapse::exec {

class ExpertPrefetch {
 public:
  ExpertPrefetch(const ir::Graph& graph, const memory::ResidencyPlan& plan);

  // After `region` ran: when it is a router with a next layer whose router
  // weights are resident, hints the residency with that layer's likely
  // experts (for the step's last token).
  void after(ir::RegionId region, const StepContext& ctx, memory::WeightResidency& residency);

 private:
  struct Guess {
    ir::ValueId input;             // layer l's router input
    ir::TensorId next_weight;      // layer l+1's router matrix
    uint32_t k = 0;
    std::vector<ir::RegionId> next_experts;  // by expert index
  };

  const memory::ResidencyPlan& plan_;
  std::vector<int32_t> guess_of_;  // by RegionId: index into guesses_, -1 for none
  std::vector<Guess> guesses_;
  std::vector<float> row_, scores_;
  std::vector<uint32_t> order_;
};

}  // namespace synapse::exec
