#include "kernels/ref/linear.h"

#include <string>

#include "synapse/error.h"

namespace synapse::ref {
namespace {

constexpr int64_t kTokensAtOnce = 8;

// dot_as(x + t * n, w, n) for t < kTokensAtOnce: each sum adds its products
// in the same order as dot_as, so the results are the same bits; walking
// the tokens side by side only lets their additions overlap. One sum alone
// is a chain of dependent additions, several times slower than the core's
// throughput: the reference's logits of a 200-token prompt over a 151936 x
// 2048 output matrix took most of a minute that way.
template <class Acc>
void dots_as(const float* x, const float* w, int64_t n, float* out) {
  Acc sum[kTokensAtOnce] = {};
  for (int64_t i = 0; i < n; ++i) {
    const auto wi = static_cast<Acc>(w[i]);
    for (int64_t t = 0; t < kTokensAtOnce; ++t) sum[t] += static_cast<Acc>(x[t * n + i]) * wi;
  }
  for (int64_t t = 0; t < kTokensAtOnce; ++t) out[t] = static_cast<float>(sum[t]);
}

}  // namespace

void matmul(const float* x, int64_t tokens, const EncodedMatrix& w, const float* bias, float* y, float* row_scratch,
            Accumulation acc) {
  // Row-outer: each weight row is dequantized once and used for every token.
  float sums[kTokensAtOnce];
  for (int64_t o = 0; o < w.rows; ++o) {
    dequantize_row(w.encoding, w.row(o), row_scratch, w.cols);
    const float b = bias ? bias[o] : 0.0f;
    int64_t t = 0;
    for (; t + kTokensAtOnce <= tokens; t += kTokensAtOnce) {
      if (acc == Accumulation::F64) {
        dots_as<double>(x + t * w.cols, row_scratch, w.cols, sums);
      } else {
        dots_as<float>(x + t * w.cols, row_scratch, w.cols, sums);
      }
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
