// Which weights stay resident and which page, for a model under a weight
// budget (SPEC §8). Matrix weights are cut into chunks: one per weight, or
// row slices for a weight too large to load whole and for an embedding
// table (read a row at a time). A region's whole-weight chunks are loaded
// together before it runs; slices are loaded one at a time by the op that
// reads them. Chunks used every token are pinned (loaded once) while they
// fit; the rest, experts first, share a pool with an eviction policy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace synapse::memory {

struct Chunk {
  ir::TensorId weight;
  uint32_t file = 0;
  uint64_t offset = 0;  // in the file
  uint64_t bytes = 0;
  int64_t row_begin = 0, row_end = 0;
  bool expert = false;  // belongs to a routed expert region
  // Of a table only looked up by row (an untied embedding): never loaded
  // whole, so never pinned; its rows are read from the file.
  bool rows_only = false;
  bool pinned = false;  // resident for the whole session
};

// The chunks of one weight: none (a vector, decoded at load), one, or row
// slices of `slice_rows` rows each.
struct WeightChunks {
  uint32_t first = 0;
  uint32_t count = 0;
  int64_t slice_rows = 0;
  uint64_t row_stride = 0;  // bytes per row
  bool sliced = false;  // loaded a slice at a time by the op that reads it
};

struct ResidencyPlan {
  std::vector<Chunk> chunks;
  std::vector<WeightChunks> weights;                 // by TensorId
  std::vector<std::vector<uint32_t>> region_chunks;  // by RegionId: loaded with the region
  uint64_t weight_bytes = 0;  // every chunk
  uint64_t pinned_bytes = 0;
  uint64_t pool_bytes = 0;    // for the chunks that page
  uint64_t min_pool_bytes = 0;  // what one region needs at once
  bool paging = false;          // false: every chunk fits and stays resident
  bool has_experts = false;
};

struct PlanOptions {
  uint64_t weight_budget = UINT64_MAX;  // for matrix weights
  uint64_t slice_bytes = uint64_t{16} << 20;  // larger weights load in row slices
  int prefetch_depth = 2;  // regions loaded ahead: the pool keeps room for them when it can
  // By TensorId: weights never read (a dropped layer's): no chunks. Empty: none.
  std::vector<bool> unused_weights;
};

// The matrix-weight bytes of the graph (what paging concerns).
uint64_t matrix_weight_bytes(const ir::Graph& graph);
// The longest matrix row in bytes: the staging a row read needs.
uint64_t widest_matrix_row(const ir::Graph& graph);

// Throws Error(InsufficientMemory, category "weights") when the weight
// budget is below what the largest region needs at once.
ResidencyPlan plan_residency(const ir::Graph& graph, const PlanOptions& options);

// Human-readable: what stays resident, what pages, the pool.
std::string describe(const ir::Graph& graph, const ResidencyPlan& plan);

}  // namespace synapse::memory
