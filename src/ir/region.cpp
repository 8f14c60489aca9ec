#include "ir/region.h"

namespace synapse::ir {

std::string to_string(const RegionKind& kind) {
  switch (kind.tag) {
    case RegionKindTag::Embedding: return "Embedding";
    case RegionKindTag::Attention: return "Attention(" + std::to_string(kind.layer) + ")";
    case RegionKindTag::Mlp: return "Mlp(" + std::to_string(kind.layer) + ")";
    case RegionKindTag::Router: return "Router(" + std::to_string(kind.layer) + ")";
    case RegionKindTag::Expert:
      return "Expert(" + std::to_string(kind.layer) + "," + std::to_string(kind.expert) + ")";
    case RegionKindTag::Merge: return "Merge(" + std::to_string(kind.layer) + ")";
    case RegionKindTag::Logits: return "Logits";
  }
  return "?";
}

const char* to_string(Provenance provenance) {
  switch (provenance) {
    case Provenance::Structural: return "Structural";
    case Provenance::ModelRouted: return "ModelRouted";
    case Provenance::TrainedPolicy: return "TrainedPolicy";
    case Provenance::Heuristic: return "Heuristic";
  }
  return "?";
}

bool is_skippable(const RegionActivation& activation) {
  return !std::holds_alternative<NotSkippable>(activation.skip);
}

}  // namespace synapse::ir
