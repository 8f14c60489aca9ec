// The canonical fingerprint of a graph (SPEC §4): SHA-256 of a versioned,
// canonical byte encoding.
//
// Encoded: values (dtype, shape; symbolic dims by symbol, lower bound and
// bound *name*), weights (encoding and logical shape), state slots (type),
// nodes in order (op kind, every attribute, operand and result ids) and
// regions (kind, members, activation).
// Not encoded: Graph::bounds (the session's chunk and context sizes), names
// of values, nodes and slots, weight names, source files, offsets and lengths
// (where the bytes are, not what they mean), and region boundary descriptors
// (derived from the members and checked by the verifier).
// So two context sizes give one fingerprint, while any change of an
// attribute, a shape, an op, their order or a weight's encoding changes it.
// Floats are encoded by their bit pattern.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/sha256.h"

namespace synapse::ir {

Sha256Digest fingerprint(const Graph& graph);
std::string fingerprint_hex(const Graph& graph);

}  // namespace synapse::ir
