// Layer drop (--drop-layers): a user asks to run a dense model without some
// of its layers, trading quality for speed and memory. It is not part of
// the model's function (SPEC §3), so it never touches the verified graph:
// the plan skips the layers' regions, every result made with it is
// QualityBounded, and the trace marks the skipped regions as dropped.
// A dropped layer's residual stream passes through unchanged (its regions'
// residual additions are bypassed), its weights are never read and its KV
// slots are never written, so never allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace synapse::exec {

struct LayerDrop {
  std::vector<uint32_t> layers;  // sorted, without repeats; empty: nothing dropped
  // The layers run elsewhere (a pipeline stage, pipeline_stage.h), not
  // dropped: the numerics stay the model's own. hidden_in: the embedding
  // does not run here, the step's hidden vectors take its output's place;
  // hidden_out: the output head does not run here, a step returns the
  // hidden vectors that enter it.
  bool placed = false;
  bool hidden_in = false;
  bool hidden_out = false;
  // By RegionId: how a dropped region is skipped (the bypass of its
  // residual addition, or outputs absent); nullopt for regions that run.
  std::vector<std::optional<ir::SkipSemantics>> regions;
  std::vector<bool> weights;  // by TensorId: read by dropped regions only
  std::vector<bool> slots;    // by SlotId: written by dropped regions only

  bool empty() const { return layers.empty(); }
  bool dropped(ir::RegionId id) const { return !regions.empty() && regions[id.index].has_value(); }
  // The numerical mode of a session with this plan (SPEC §3).
  const char* numerical_mode() const { return empty() || placed ? "EquivalentNumerics" : "QualityBounded"; }
  // "QualityBounded (layers 10, 11 dropped)", or "" when nothing is dropped.
  std::string mode() const;
};

// Whether regions of this kind belong to a layer (not the embedding or the
// output head), and the number of layers of a decoder graph.
bool in_layer(ir::RegionKindTag tag);
uint32_t layer_count(const ir::Graph& graph);

// The plan for dropping `layers` of graph (in any order, repeats ignored).
// Throws Error(Usage) for a layer the graph does not have, and
// Error(InvalidValue) for a layer whose regions hand something other than
// the residual stream to the rest of the model (nothing could stand in
// for it).
LayerDrop plan_layer_drop(const ir::Graph& graph, std::span<const uint32_t> layers);

// Fills drop's regions, weights and slots for the regions `dropped` names
// (by RegionId): each bypasses its residual addition where the running
// regions read its output, or has its outputs absent; a region `absent`
// names has its outputs absent in any case and its inputs are not needed
// (a pipeline stage provides its outputs, or hands its input on instead);
// the values `handed_on` are provided whatever reads them.
// Throws Error(InvalidValue) as plan_layer_drop.
void plan_dropped_regions(const ir::Graph& graph, const std::vector<bool>& dropped, const std::vector<bool>& absent,
                          std::span<const ir::ValueId> handed_on, LayerDrop& drop);

// "10,11" -> {10, 11}; throws Error(Usage) for anything but comma-separated
// layer numbers.
std::vector<uint32_t> parse_layer_list(const std::string& text);

}  // namespace synapse::exec
