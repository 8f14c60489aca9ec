// The weights of a model as the reference ops read them: matrices stay
// encoded in the mapped file (rows dequantized on use); vectors (norm
// weights, biases, frequency factors) are decoded to F32 once.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ids.h"
#include "kernels/ref/linear.h"
#include "model/model.h"

namespace synapse::exec {

class WeightTable {
 public:
  // Throws Error(InvalidValue) when a matrix's rows need more bytes than its
  // descriptor gives it.
  explicit WeightTable(const Model& model);

  const ref::EncodedMatrix& matrix(ir::TensorId id) const { return matrices_.at(id.index); }
  const float* vector(ir::TensorId id) const { return vectors_.at(id.index).data(); }
  uint64_t bytes(ir::TensorId id) const { return bytes_.at(id.index); }
  // The widest matrix row: the dequantization scratch an op needs.
  int64_t max_matrix_cols() const { return max_cols_; }

 private:
  std::vector<ref::EncodedMatrix> matrices_;  // rank-2 weights; empty entries otherwise
  std::vector<std::vector<float>> vectors_;   // rank-1 weights; empty otherwise
  std::vector<uint64_t> bytes_;
  int64_t max_cols_ = 0;
};

}  // namespace synapse::exec
