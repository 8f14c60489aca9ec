// The weights a model file offers, by llama.cpp tensor name, as weight
// descriptors (file, offset, length, encoding, PyTorch-order shape). Both
// importers (GGUF, llama2.c) fill one, so the graph builder never sees which
// format it reads.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace synapse {

using TensorShape = std::vector<int64_t>;  // outermost first: a MatMul weight is [out, in]

std::string to_string(const TensorShape& shape);  // "[64, 172]"

class TensorTable {
 public:
  // Throws Error(DuplicateTensor) when the name is already present.
  void add(ir::WeightDescriptor descriptor);
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  // Unchecked lookup, for optional tensors and for sizes read off a tensor.
  const ir::WeightDescriptor* find(const std::string& name) const;

  // The descriptor of a tensor the architecture needs, checked before use:
  // present (MissingKey), of the expected shape (InvalidValue, naming both
  // shapes) and in an encoding we can decode (UnknownEncoding). The subject
  // of each error is the tensor name.
  const ir::WeightDescriptor& require(const std::string& name, const TensorShape& shape) const;

 private:
  std::unordered_map<std::string, ir::WeightDescriptor> by_name_;
};

}  // namespace synapse
