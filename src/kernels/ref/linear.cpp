#include "kernels/ref/linear.h"

#include <string>

#include "synapse/error.h"

namespace synapse::ref {

void matmul(const float* x, int64_t tokens, const EncodedMatrix& w, const float* bias, float* y, float* row_scratch,
            Accumulation acc) {
  // Row-outer: each weight row is dequantized once and used for every token,
  // kTokensAtOnce tokens side by side (dots in accumulation.h).
  constexpr int kTokensAtOnce = 8;
  float sums[kTokensAtOnce];
  for (int64_t o = 0; o < w.rows; ++o) {
    dequantize_row(w.encoding, w.row(o), row_scratch, w.cols);
    const float b = bias ? bias[o] : 0.0f;
    int64_t t = 0;
    for (; t + kTokensAtOnce <= tokens; t += kTokensAtOnce) {
      dots(acc, x + t * w.cols, row_scratch, w.cols, sums);
      for (int64_t k = 0; k < kTokensAtOnce; ++k) y[(t + k) * w.rows + o] = sums[k] + b;
    }
    for (; t < tokens; ++t) y[t * w.rows + o] = dot(acc, x + t * w.cols, row_scratch, w.cols) + b;
  }
}

void embedding(const int32_t* ids, int64_t tokens, const EncodedMatrix& table, float* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= table.rows)
      throw Error(ErrorKind::InvalidValue,
                  "token id " + std::to_string(ids[t]) + " outside the vocabulary of " + std::to_string(table.rows));
    dequantize_row(table.encoding, table.row(ids[t]), y + t * table.cols, table.cols);
  }
}

}  // namespace synapse::ref
