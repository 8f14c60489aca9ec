// Re-encodes a tensor row by row: decode to float32, encode, check the result
// is finite (llama.cpp's ggml_validate_row_data). Rows are independent, so
// the bytes do not depend on how many threads share them.
#pragma once

#include <cstdint>
#include <string>

#include "encoding/encoding.h"
#include "kernels/cpu/thread_pool.h"

namespace synapse::quant {

// `src` holds n_rows rows of row_elems elements in `from`, `dst` room for
// them in `to`. Throws InvalidValue (naming `tensor`) when a row encodes to
// non-finite values, as llama.cpp's quantizer refuses such a file.
void convert_rows(cpu::ThreadPool& pool, const uint8_t* src, Encoding from, uint8_t* dst, Encoding to,
                  uint64_t row_elems, uint64_t n_rows, const std::string& tensor);

}  // namespace synapse::quant
