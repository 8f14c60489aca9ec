// The Model IR graph (SPEC §4): SSA values, operations in topological order,
// weights by TensorId, state slots and regions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "ir/attributes.h"
#include "ir/ids.h"
#include "ir/ir_types.h"
#include "ir/region.h"

namespace synapse::ir {

struct Node {
  Op op;
  std::vector<ValueId> operands;
  std::optional<ValueId> result;  // every op but Output defines one value
  std::string name;               // for messages and dumps; not fingerprinted
};

// Where a weight's bytes are and how to read them. shape is the logical shape,
// outermost first (PyTorch order; the reverse of ggml's ne): a MatMul weight
// is [out, in].
struct WeightDescriptor {
  std::string name;  // tensor name in the source file
  uint32_t file = 0;  // index into the model's source files
  uint64_t offset = 0;
  uint64_t length = 0;
  Encoding encoding = Encoding::F32;
  std::vector<int64_t> shape;
};

// Per-layer state (a KV cache half): shape [Context[1..max_ctx], width].
struct StateSlot {
  std::string name;
  ValueType type;
};

struct Graph {
  std::vector<Value> values;  // indexed by ValueId
  std::vector<Node> nodes;    // indexed by NodeId, in topological order
  std::vector<WeightDescriptor> weights;  // indexed by TensorId
  std::vector<StateSlot> slots;           // indexed by SlotId
  std::vector<Region> regions;            // indexed by RegionId
  // Values of the symbolic bounds ("chunk", "max_ctx"). Session-specific, so
  // not part of the fingerprint.
  std::map<std::string, int64_t> bounds;

  // Checked accessors: throw synapse::Error(InvalidValue) on a bad id.
  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  const WeightDescriptor& weight(TensorId id) const;
  const StateSlot& slot(SlotId id) const;
  const Region& region(RegionId id) const;

  std::vector<NodeId> entry_inputs() const;
  std::vector<NodeId> entry_outputs() const;
};

// For each value, the nodes that use it (in node order, once per node).
using ConsumerIndex = std::vector<std::vector<NodeId>>;
// Operands with ids out of range are ignored; the verifier reports them.
ConsumerIndex index_consumers(const Graph& graph);

// Checks every weight descriptor against the sizes of the model's source
// files (file_sizes[descriptor.file]). Throws synapse::Error: OutOfBounds for
// an unknown file or a range past its end, Overflow for offset + length
// overflowing, InvalidValue for an empty range; the subject is the tensor name.
void check_weight_bounds(const Graph& graph, std::span<const uint64_t> file_sizes);

}  // namespace synapse::ir
