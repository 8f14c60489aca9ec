// Weight-matrix ops: MatMul, Logits and Embedding over encoded weight rows.
// A weight is [rows, cols] (PyTorch order); each row is one output and is
// dequantized with the encoding's reference codec before use.
#pragma once

#include <cstdint>

#include "encoding/encoding.h"
#include "kernels/ref/accumulation.h"

namespace synapse::ref {

struct EncodedMatrix {
  Encoding encoding = Encoding::F32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  uint64_t row_stride = 0;  // bytes per row

  const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * row_stride; }
};

// y[t, o] = x[t, :] . w[o, :] (+ bias[o]) for t < tokens; x is [tokens,
// w.cols], y is [tokens, w.rows]. row_scratch holds w.cols floats.
void matmul(const float* x, int64_t tokens, const EncodedMatrix& w, const float* bias, float* y, float* row_scratch,
            Accumulation acc);

// y[t, :] = table[ids[t], :]. Throws Error(InvalidValue) for an id outside
// the table.
void embedding(const int32_t* ids, int64_t tokens, const EncodedMatrix& table, float* y);

}  // namespace synapse::ref
