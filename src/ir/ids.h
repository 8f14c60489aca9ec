// Strong ids for the IR tables: an id is the index of its entry in the Graph's
// vector of that kind, typed so that a ValueId cannot be passed as a NodeId.
#pragma once

#include <compare>
#include <cstdint>

namespace synapse::ir {

template <class Tag>
struct Id {
  static constexpr uint32_t kInvalid = UINT32_MAX;
  uint32_t index = kInvalid;

  constexpr bool valid() const { return index != kInvalid; }
  friend constexpr auto operator<=>(Id, Id) = default;
};

using ValueId = Id<struct ValueTag>;
using NodeId = Id<struct NodeTag>;
using TensorId = Id<struct TensorTag>;  // a weight, described by a WeightDescriptor
using SlotId = Id<struct SlotTag>;      // a state slot (KV of one layer)
using RegionId = Id<struct RegionTag>;

}  // namespace synapse::ir
