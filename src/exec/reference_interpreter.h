// The reference interpreter (SPEC §6): the oracle. Runs every node of a
// verified graph in node order on the reference ops, in scalar FP32 or with
// FP64 accumulation, with a fresh buffer per value. Regions matter only for
// their activation: a region whose decision selects no token of the step is
// not run (its outputs are absent, or bypassed), as the scheduler would.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/kv_state.h"
#include "exec/step_context.h"
#include "exec/weight_table.h"
#include "kernels/ref/accumulation.h"
#include "model/model.h"

namespace synapse::exec {

struct InterpretedStep {
  int64_t tokens = 0;
  // Per ValueId: the F32 rows of each value computed this step; empty for
  // absent values, entry inputs and state views.
  std::vector<std::vector<float>> values;
  std::vector<float> logits;  // [tokens, vocab]
};

class ReferenceInterpreter {
 public:
  // The model must outlive the interpreter. The KV state spans the graph's
  // "max_ctx" bound, stored as `kv` says (as a session's, by default).
  explicit ReferenceInterpreter(const Model& model, ref::Accumulation accumulation = ref::Accumulation::F32,
                                KvLayout kv = {});

  // One step: tokens at positions (any count up to max_ctx); state persists
  // between steps.
  InterpretedStep run(std::span<const int32_t> tokens, std::span<const int32_t> positions);

  KvState& kv() { return kv_; }

 private:
  const Model& model_;
  ref::Accumulation accumulation_;
  WeightTable weights_;
  KvState kv_;
  StepScratch scratch_;
  std::vector<int64_t> region_of_node_;  // -1 for entry nodes
};

}  // namespace synapse::exec
