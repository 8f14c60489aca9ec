// Activation statistics for importance-weighted quantization (llama.cpp's
// imatrix): for every matrix product of a block's weight, the sum over the
// tokens that reach it of each input column squared, and how many tokens
// did. An expert's product sees only the tokens routed to it, so merged
// expert tensors get one row of sums and one count per expert.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exec/scheduler.h"
#include "ir/graph.h"
#include "quantize/imatrix_file.h"

namespace synapse::calibrate {

class ImatrixCollector {
 public:
  // Collects the products of `graph`'s weights named blk.*, and of
  // output.weight when process_output (llama-imatrix --process-output).
  ImatrixCollector(const ir::Graph& graph, bool process_output);

  // The scheduler's listener: reads the inputs of an executed region's
  // products (every value of a region is intact until the region ends).
  void observe(const exec::RegionEvent& event, std::span<const exec::TensorRef> values);

  // The sums so far, as an imatrix file holds them; weights no token
  // reached are left out.
  quant::Imatrix result(std::vector<std::string> datasets, uint32_t chunk_count, uint32_t chunk_size) const;

 private:
  struct Product {
    ir::NodeId node;
    uint32_t entry = 0;
    uint32_t expert = 0;
    // The product's input is the region's input, still holding every
    // token of the step: the route picks the rows.
    bool routed_input = false;
  };
  struct Entry {
    std::string name;
    int64_t cols = 0;
    std::vector<double> sum2;      // cols per expert
    std::vector<uint64_t> counts;  // per expert
  };

  void add_rows(const Product& product, const exec::TensorRef& x, const exec::TensorRef* gates, uint32_t slot);

  const ir::Graph& graph_;
  std::vector<std::vector<Product>> products_;  // by RegionId
  std::vector<Entry> entries_;
};

}  // namespace synapse::calibrate
