// Element types, symbolic-bounded shapes and SSA values of the Model IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "ir/ids.h"

namespace synapse::ir {

// Encoded: a weight stored in a block encoding (Q8_0, Q4_K, ...); its
// WeightDescriptor's encoding id says which. Activations are never Encoded.
enum class DType : uint8_t { F32, F16, BF16, I32, Encoded };

const char* to_string(DType dtype);
bool is_float(DType dtype);  // F32, F16 or BF16
// The dtype of a weight stored in `encoding`.
DType dtype_of_encoding(Encoding encoding);

// A dimension is either fixed (size >= 1) or symbolic: `Tokens[1..chunk]`
// has symbol "Tokens", lower 1 and bound "chunk". The bound is a name; its
// value lives in Graph::bounds, so the same graph serves any context size and
// fingerprints the same.
struct Dim {
  int64_t size = 0;    // fixed dims only
  std::string symbol;  // symbolic dims only
  int64_t lower = 0;   // symbolic dims only
  std::string bound;   // symbolic dims only

  static Dim fixed(int64_t size);
  static Dim symbolic(std::string symbol, int64_t lower, std::string bound);
  bool is_symbolic() const { return !symbol.empty(); }
  friend bool operator==(const Dim&, const Dim&) = default;
};

using Shape = std::vector<Dim>;

std::string to_string(const Dim& dim);
std::string to_string(const Shape& shape);

struct ValueType {
  DType dtype = DType::F32;
  Shape shape;
  friend bool operator==(const ValueType&, const ValueType&) = default;
};

std::string to_string(const ValueType& type);

// An SSA value: defined by exactly one node (its producer).
struct Value {
  ValueType type;
  NodeId producer;
  std::string name;  // for messages and dumps; not part of the fingerprint
};

}  // namespace synapse::ir
