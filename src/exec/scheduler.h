// The region scheduler (SPEC §6): the one executor generation uses. Regions
// run in a precomputed topological order, each through the kernel the
// registry bound to it; per step each region is Executed, Skipped (its route
// or policy selects no token, outputs absent), Bypassed (skipped, the bypass
// output takes its input) or Absent (an input it cannot do without is
// absent). Buffers are planned once at construction; a step allocates
// nothing. Cancellation is checked between regions.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "exec/buffer_plan.h"
#include "exec/expert_prefetch.h"
#include "exec/kernel_registry.h"
#include "exec/kv_state.h"
#include "exec/layer_drop.h"
#include "exec/route_gather.h"
#include "exec/step_context.h"
#include "exec/weight_table.h"
#include "model/model.h"
#include "synapse/error.h"

namespace synapse::exec {

enum class RegionOutcome : uint8_t { Executed, Skipped, Bypassed, Absent };
const char* to_string(RegionOutcome outcome);
const char* to_string(ir::RegionKindTag tag);  // "Attention", "Mlp", ...

// One region of one step, for tracing (SPEC §9).
struct RegionEvent {
  uint64_t step = 0;
  int64_t position = 0;  // of the step's first token
  int64_t tokens = 1;    // in the step
  ir::RegionId region;
  const char* kind = "";
  uint32_t layer = 0;
  uint32_t expert = 0;
  RegionOutcome outcome = RegionOutcome::Executed;
  ir::Provenance provenance = ir::Provenance::Structural;
  // Skipped or bypassed because the user dropped its layer (--drop-layers).
  bool dropped = false;
  // The step ran with dropped layers: its numerical mode is QualityBounded.
  bool quality_bounded = false;
  int64_t duration_ns = 0;
  // The region's weights (one embedding row per token), when executed.
  uint64_t weight_bytes_touched = 0;
  // Of those, the bytes loaded from disk for it (paged weights only), and
  // of these, the bytes a prefetch loaded before the region asked.
  uint64_t weight_bytes_loaded = 0;
  uint64_t weight_bytes_prefetched = 0;
  // Paged weights resident after the region (0 when nothing pages).
  uint64_t weight_bytes_resident = 0;
  const char* kernel = "";
};

// Called after each region with the step's values (the region's outputs are
// readable until a later region reuses their buffers).
using RegionListener = std::function<void(const RegionEvent& event, std::span<const TensorRef> values)>;

// Thrown by a step whose cancellation flag was set: Error(Cancelled), so
// whatever reports typed errors reports it, and its own type for code that
// catches cancellation alone.
class Cancelled : public Error {
 public:
  Cancelled() : Error(ErrorKind::Cancelled, "evaluation cancelled") {}
};

struct StepInput {
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;
  uint64_t step = 0;
  // The step's logits are rows for its last output_rows tokens (0: every
  // token). A prompt chunk whose logits nobody reads asks for one row, so
  // the vocabulary-wide product runs once instead of once per token.
  int64_t output_rows = 0;
  // Several sequences in one step: each one's tokens, in order, with its KV
  // state (output_rows then counts per sequence). Empty: one sequence, the
  // kv run() is given.
  std::span<const StepSequence> sequences{};
  // A pipeline stage that does not embed (LayerDrop::hidden_in): the
  // previous stage's hidden vectors, [tokens, hidden_width()], in place of
  // the embedding's output.
  std::span<const float> hidden{};
};

class RegionScheduler {
 public:
  // The model must outlive the scheduler. Steps return logits for at most
  // logits_rows tokens (buffers are planned for that many). The regions
  // `drop` names never run (layer_drop.h); `vector_reads` says how the
  // weight vectors are read at load (weight_table.h). Throws
  // Error(InvalidValue) when the regions' dependencies form a cycle.
  RegionScheduler(const Model& model, const KernelRegistry& kernels,
                  ref::Accumulation accumulation = ref::Accumulation::F32, int64_t logits_rows = 1,
                  LayerDrop drop = {}, VectorReads vector_reads = VectorReads::ReadAround);

  // Runs one step of 1..chunk tokens against kv and returns its logits rows
  // [output rows, vocab], valid until the next step; empty when the logits
  // are absent (a region they need did not run). A pipeline stage that
  // hands its hidden vectors on (LayerDrop::hidden_out) returns them
  // instead, [tokens, hidden_width()]. Throws Error(InvalidValue) before any
  // compute for a step that asks for more logits rows than planned, or whose
  // hidden vectors are not [tokens, hidden_width()] where the stage takes
  // them; Cancelled, between regions, once *cancel is true.
  std::span<const float> run(const StepInput& input, KvState& kv, const std::atomic<bool>* cancel = nullptr);

  void set_listener(RegionListener listener) { listener_ = std::move(listener); }
  // Pages weights through `residency` from now on: binds every paged
  // weight to its mirror. prefetch_depth regions ahead are loaded while
  // one runs.
  void page_weights(std::unique_ptr<memory::WeightResidency> residency, int prefetch_depth);
  const memory::WeightResidency* residency() const { return residency_.get(); }
  std::span<const ir::RegionId> order() const { return order_; }
  const LayerDrop& layer_drop() const { return drop_; }
  const RegionKernel& kernel(ir::RegionId region) const { return *kernels_.at(region.index); }
  int64_t chunk() const { return chunk_; }
  // The width of the residual stream a pipeline stage receives and hands on.
  int64_t hidden_width() const { return hidden_width_; }
  int64_t logits_rows() const { return logits_rows_; }
  uint64_t arena_bytes() const { return plan_.arena_floats * sizeof(float); }
  // The arena and the ops' scratch: what a step works in.
  uint64_t scratch_bytes() const { return arena_bytes() + scratch_.bytes(); }
  // The weights decoded at load (vectors), resident whatever the budget.
  uint64_t decoded_weight_bytes() const { return weights_.vector_bytes(); }

 private:
  RegionOutcome run_region(StepContext& ctx, ir::RegionId id);
  // Runs a selected region, its chunks pinned while it runs.
  void execute(StepContext& ctx, ir::RegionId id);
  // Hints the residency to load the next regions (in order after `at`)
  // known to run: routed ones only once their route is computed.
  void prefetch_after(size_t at);

  const Model& model_;
  ref::Accumulation accumulation_;
  LayerDrop drop_;
  int64_t chunk_;
  int64_t logits_rows_;
  WeightTable weights_;
  StepScratch scratch_;
  std::vector<ir::RegionId> order_;
  std::vector<size_t> position_in_order_;  // by RegionId
  std::vector<ir::NodeId> entry_inputs_;
  // Per region, indexed by RegionId:
  std::vector<std::shared_ptr<RegionKernel>> kernels_;
  std::vector<RegionWeightBytes> weight_bytes_;
  std::vector<std::vector<ir::ValueId>> required_inputs_;  // inputs used by a non-Merge member
  BufferPlan plan_;
  // Left uninitialized: pages no step writes (most of a chunk-sized
  // activation in decode) are never touched, so they take no memory.
  std::unique_ptr<float[]> arena_;
  std::vector<TensorRef> values_;
  ir::ValueId logits_;
  // Pipeline stages: the embedding's output (taken from the step's hidden
  // vectors) and the output head's input (handed on).
  ir::RegionId embedding_;
  ir::ValueId embedding_out_;
  ir::ValueId head_input_;
  int64_t hidden_width_ = 0;
  RegionListener listener_;
  RouteGather gather_;  // routed regions run on their tokens only
  std::unique_ptr<memory::WeightResidency> residency_;
  std::unique_ptr<ExpertPrefetch> expert_prefetch_;
  int prefetch_depth_ = 0;
};

}  // namespace synapse::exec
