// What one step of execution works on: where every value lives, the
// weights, the KV state and scratch space. Shared by the reference
// interpreter and the region scheduler, so both run the same ops.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/kv_state.h"
#include "exec/weight_table.h"
#include "ir/graph.h"
#include "kernels/cpu/rope_table.h"
#include "kernels/ref/accumulation.h"
#include "memory/weight_residency.h"

namespace synapse::exec {

// A value during a step: F32 rows in `data`, I32 entry inputs in `ids`, or a
// state view (the slot's positions [0, rows)). present is false for a value
// not computed this step (an absent output of a skipped region).
struct TensorRef {
  float* data = nullptr;
  const int32_t* ids = nullptr;
  ir::SlotId state;
  int64_t rows = 0;
  int64_t cols = 0;
  bool present = false;

  int64_t elements() const { return rows * cols; }
};

// rows x cols of a value of `type` in a step of `tokens` tokens: cols is the
// last dim (1 for a vector), the symbolic dims count `tokens`.
struct Extent {
  int64_t rows = 0;
  int64_t cols = 0;
};
Extent extent_of(const ir::ValueType& type, int64_t tokens);

// Scratch the ops need, sized once for the graph, context and chunk.
struct StepScratch {
  StepScratch(const ir::Graph& graph, const WeightTable& weights, int64_t max_ctx);

  std::vector<float> weight_row;  // one dequantized matrix row
  std::vector<float> scores;      // attention scores over the context
  std::vector<uint32_t> route;    // top-k routing bookkeeping
  // A chunk of activation rows quantized for the CPU dot kernels.
  std::vector<uint8_t> activations;
  // The rows whose logits a step of several sequences asks for, gathered.
  std::vector<float> logits_input;
  // The step's RoPE rotations, shared by the Rope nodes of every layer.
  cpu::RopeTable rope;

  uint64_t bytes() const {
    return (weight_row.size() + scores.size() + logits_input.size()) * sizeof(float) +
           route.size() * sizeof(uint32_t) + activations.size() + rope.bytes();
  }
};

// The tokens of one sequence in a step of several: rows [first, first +
// count) of the step, whose keys and values are kept in kv.
struct StepSequence {
  KvState* kv = nullptr;
  int64_t first = 0;
  int64_t count = 0;
};

// The logits rows a sequence of `count` tokens asks for when a step asks
// for the last output_rows of each (0: all).
inline int64_t logits_rows_of(int64_t output_rows, int64_t count) {
  return output_rows > 0 && output_rows < count ? output_rows : count;
}

struct StepContext {
  const ir::Graph& graph;
  const WeightTable& weights;
  KvState& kv;
  std::span<TensorRef> values;  // indexed by ValueId
  StepScratch& scratch;
  int64_t tokens = 0;
  ref::Accumulation accumulation = ref::Accumulation::F32;
  // Logits are computed for the last output_rows tokens only (0: all), of
  // each sequence when there are several.
  int64_t output_rows = 0;
  // The step's sequences, in row order; empty: one, all rows, in kv.
  std::span<const StepSequence> sequences{};
  // Pages weights in and out under a memory budget; null: all resident.
  memory::WeightResidency* residency = nullptr;
  // Weight bytes loaded from disk for the running region.
  memory::LoadedBytes weight_bytes_loaded{};
};

// Whether weight w is paged in row slices, read one slice at a time by the
// op using it (so it cannot join a grouped product).
inline bool sliced(const StepContext& ctx, ir::TensorId w) {
  return ctx.residency && ctx.residency->plan().weights[w.index].sliced;
}

}  // namespace synapse::exec
