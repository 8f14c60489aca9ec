// Regions (SPEC §5): the units that the scheduler runs, skips, pages, places
// and encodes. A region is a set of member nodes plus a descriptor of its
// boundary and an activation rule.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/ids.h"

namespace synapse::ir {

enum class RegionKindTag : uint8_t { Embedding, Attention, Mlp, Router, Expert, Merge, Logits };

struct RegionKind {
  RegionKindTag tag = RegionKindTag::Embedding;
  uint32_t layer = 0;   // Attention, Mlp, Router, Expert, Merge
  uint32_t expert = 0;  // Expert

  static RegionKind embedding() { return {RegionKindTag::Embedding}; }
  static RegionKind attention(uint32_t layer) { return {RegionKindTag::Attention, layer}; }
  static RegionKind mlp(uint32_t layer) { return {RegionKindTag::Mlp, layer}; }
  static RegionKind router(uint32_t layer) { return {RegionKindTag::Router, layer}; }
  static RegionKind expert_of(uint32_t layer, uint32_t e) { return {RegionKindTag::Expert, layer, e}; }
  static RegionKind merge(uint32_t layer) { return {RegionKindTag::Merge, layer}; }
  static RegionKind logits() { return {RegionKindTag::Logits}; }
  friend bool operator==(const RegionKind&, const RegionKind&) = default;
};

std::string to_string(const RegionKind& kind);  // "Attention(3)", "Expert(3,17)"

// What crosses a region's edge. Every list is sorted and without duplicates.
struct RegionBoundary {
  std::vector<ValueId> inputs;   // used by members, defined outside
  std::vector<ValueId> outputs;  // defined by members, used outside
  std::vector<SlotId> state_reads;
  std::vector<SlotId> state_writes;
  std::vector<TensorId> weights;
  friend bool operator==(const RegionBoundary&, const RegionBoundary&) = default;
};

// --- RegionActivation: decision + provenance + skip semantics ---------------

struct AlwaysActive {};
// Active for the tokens whose TopKRoute gate column `slot` is non-zero.
struct RouteSlot {
  ValueId router;
  uint32_t slot;
};
// Active where a policy value (a trained or heuristic gate) says so.
struct PolicyDecision {
  ValueId value;
};
using Decision = std::variant<AlwaysActive, RouteSlot, PolicyDecision>;

// Why the region may not run: Structural (it always runs), ModelRouted (the
// model's own router), TrainedPolicy (a policy trained to skip), Heuristic.
enum class Provenance : uint8_t { Structural, ModelRouted, TrainedPolicy, Heuristic };

struct NotSkippable {};
// Skipped: the region's outputs do not exist for the step.
struct OutputsAbsent {};
// Skipped: `output` takes the value of `input` (both on the boundary); any
// other output is absent.
struct Bypass {
  ValueId input;
  ValueId output;
};
using SkipSemantics = std::variant<NotSkippable, OutputsAbsent, Bypass>;

struct RegionActivation {
  Decision decision;
  Provenance provenance = Provenance::Structural;
  SkipSemantics skip;

  static RegionActivation always() { return {AlwaysActive{}, Provenance::Structural, NotSkippable{}}; }
  // An MoE expert: chosen by the model's router, absent when not chosen.
  static RegionActivation routed(ValueId router, uint32_t slot) {
    return {RouteSlot{router, slot}, Provenance::ModelRouted, OutputsAbsent{}};
  }
};

const char* to_string(Provenance provenance);
bool is_skippable(const RegionActivation& activation);

struct Region {
  RegionKind kind;
  std::vector<NodeId> members;  // in graph order
  RegionBoundary boundary;      // the descriptor; the verifier re-derives it
  RegionActivation activation = RegionActivation::always();
};

}  // namespace synapse::ir
