// Re-encodes a tensor row by row: decode to float32, encode, check the result
// is finite (llama.cpp's ggml_validate_row_data). Rows are independent, so
// the bytes do not depend on how many threads share them.
#pragma once

#include <cstdint>
#include <string>

#include "encoding/encoding.h"
#include "kernels/cpu/thread_pool.h"

namespace synapse::quant {

// An imatrix's per-column importance for a tensor's rows: one row of
// row_elems weights per matrix of rows_per_matrix rows (each expert of a
// 3-D tensor has its own). No values: the rows are encoded unweighted.
struct RowImportance {
  const float* values = nullptr;
  uint64_t rows_per_matrix = 0;
};

// `src` holds n_rows rows of row_elems elements in `from`, `dst` room for
// them in `to`. With importance, rows go through quantize_row_weighted
// (scalar), else through cpu::encode_row. Throws InvalidValue (naming
// `tensor`) when a row encodes to non-finite values, as llama.cpp's
// quantizer refuses such a file.
void convert_rows(cpu::ThreadPool& pool, const uint8_t* src, Encoding from, uint8_t* dst, Encoding to,
                  uint64_t row_elems, uint64_t n_rows, const std::string& tensor, RowImportance importance = {});

}  // namespace synapse::quant
