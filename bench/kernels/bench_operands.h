// Random operands for the kernel benchmarks: `copies` identical encoded
// matrices back to back (visited in turn, together they can exceed the
// last-level cache) and `tokens` activation rows in a kernel's format.
// The matrices lie in 2 MiB pages, as a model's mapped weights do: in 4 KiB
// pages "dram" measured the TLB as much as the kernel.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/dot_kernel.h"
#include "memory/huge_page_buffer.h"

namespace synapse::cpu {

struct BenchOperands {
  uint64_t w_stride = 0;      // bytes per weight row
  uint64_t matrix_bytes = 0;  // bytes per copy
  memory::HugePageBuffer weights;
  uint64_t x_stride = 0;      // bytes per activation row
  std::vector<uint8_t> x;
  const uint8_t* matrix(int copy) const { return weights.data() + copy * matrix_bytes; }
};

inline BenchOperands bench_operands(Encoding encoding, ActivationFormat activation, int64_t rows, int64_t cols,
                                    int copies, int tokens) {
  BenchOperands o;
  o.w_stride = row_bytes(encoding, cols);
  o.matrix_bytes = o.w_stride * rows;
  o.x_stride = activation_row_bytes(activation, cols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(cols);
  o.weights = memory::HugePageBuffer(o.matrix_bytes * copies);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : values) v = uniform(rng);
    quantize_row(encoding, values.data(), o.weights.data() + r * o.w_stride, cols);
  }
  for (int c = 1; c < copies; ++c) std::memcpy(o.weights.data() + c * o.matrix_bytes, o.weights.data(), o.matrix_bytes);
  o.x.resize(o.x_stride * tokens);
  for (int t = 0; t < tokens; ++t) {
    for (float& v : values) v = uniform(rng);
    quantize_activation_row(activation, values.data(), cols, o.x.data() + t * o.x_stride);
  }
  return o;
}

}  // namespace synapse::cpu
