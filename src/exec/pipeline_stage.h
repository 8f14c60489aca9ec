// A pipeline stage (SPEC §11): the contiguous range of layers one process
// (an MPI rank) runs, the other layers being placed on other stages. The
// stage's plan is a layer drop whose layers are placed, not dropped: the
// numerics stay the model's own. The first stage embeds the tokens; a later
// one takes the previous stage's hidden vectors in place of the embedding;
// every stage but the last hands its last layer's hidden vectors on instead
// of computing logits. Weights and KV slots of the layers placed elsewhere
// (and of an embedding or output head not run here) are never read or
// allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/layer_drop.h"
#include "ir/graph.h"

namespace synapse::exec {

struct StageRange {
  uint32_t first_layer = 0;
  uint32_t end_layer = 0;  // one past the last layer this stage runs

  bool operator==(const StageRange&) const = default;
};

// The plan of a stage of `graph`. Throws Error(Usage) for an empty range or
// one past the model's layers.
LayerDrop plan_stage(const ir::Graph& graph, StageRange range);

// "0-11,12-23" -> the stages' ranges; each must start where the one before
// ended, the first at 0 and the last end at n_layer. Throws Error(Usage).
std::vector<StageRange> parse_stage_ranges(const std::string& text, uint32_t n_layer);

// Contiguous ranges for `stages` stages: by layer count (balanced counts)
// or by weight bytes (each stage's layers as close as can be to an equal
// share of the weight bytes a step reads: the output head counts for the
// last stage, the embedding, read a row per token, for none). Throws
// Error(Usage) for more stages than layers.
enum class SplitBy { Layers, Bytes };
std::vector<StageRange> split_stages(const ir::Graph& graph, int stages, SplitBy by);

}  // namespace synapse::exec
