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

// How the vectors are read from the mapped files at load.
enum class VectorReads {
  // With readahead: a fault reads the 2 MiB around a vector and maps it
  // whole, as a resident session's decode would. (A page mapped alone keeps
  // its 2 MiB in 4 KiB pages for good: 1-thread decode of Qwen2.5-0.5B Q8_0
  // ran 6-8% slower so, its weights 64% in 2 MiB pages against 95%.)
  ReadAround,
  // Without: each vector reads its own pages only, for a session under a
  // memory budget, which reads most weights elsewhere (paged) and has no
  // room for megabytes read around each vector.
  OwnPagesOnly,
};

class WeightTable {
 public:
  // Throws Error(InvalidValue) when a matrix's rows need more bytes than its
  // descriptor gives it. Weights flagged in `unused` (by TensorId; a
  // dropped layer's) are never read: no vector is decoded for them.
  explicit WeightTable(const Model& model, const std::vector<bool>& unused = {},
                       VectorReads reads = VectorReads::ReadAround);

  const ref::EncodedMatrix& matrix(ir::TensorId id) const { return matrices_.at(id.index); }
  // Points matrix id at another copy of its bytes (a paged weight's mirror).
  void bind(ir::TensorId id, const uint8_t* data) { matrices_.at(id.index).data = data; }
  const float* vector(ir::TensorId id) const { return vectors_.at(id.index).data(); }
  uint64_t bytes(ir::TensorId id) const { return bytes_.at(id.index); }
  // The widest matrix row: the dequantization scratch an op needs.
  int64_t max_matrix_cols() const { return max_cols_; }
  // The decoded vectors' bytes.
  uint64_t vector_bytes() const;

 private:
  std::vector<ref::EncodedMatrix> matrices_;  // rank-2 weights; empty entries otherwise
  std::vector<std::vector<float>> vectors_;   // rank-1 weights; empty otherwise
  std::vector<uint64_t> bytes_;
  int64_t max_cols_ = 0;
};

// The weight bytes a region reads in a step: all of its weights, except an
// embedding table, of which it reads one row per token. (An expert's weights
// are views into the merged expert tensor, so they count one expert's bytes.)
struct RegionWeightBytes {
  uint64_t fixed = 0;
  uint64_t per_token = 0;
  uint64_t touched(int64_t tokens) const { return fixed + per_token * static_cast<uint64_t>(tokens); }
};
RegionWeightBytes region_weight_bytes(const ir::Graph& graph, const WeightTable& weights, const ir::Region& region);

}  // namespace synapse::exec
