#include "eval/token_scores.h"

#include <cmath>
#include <cstddef>

namespace synapse::eval {
namespace {

struct RowMax {
  float value;
  int32_t index;
};

RowMax row_max(std::span<const float> row) {
  RowMax m{row[0], 0};
  for (size_t i = 1; i < row.size(); ++i)
    if (row[i] > m.value) m = {row[i], static_cast<int32_t>(i)};
  return m;
}

// log sum exp(row - max), the exponentials in float and their sum in double.
double log_sum_exp(std::span<const float> row, float max) {
  double sum = 0;
  for (float v : row) sum += std::exp(v - max);
  return std::log(sum);
}

}  // namespace

RowScore score_row(std::span<const float> row, int32_t token) {
  const RowMax m = row_max(row);
  const double lse = log_sum_exp(row, m.value);
  return {static_cast<double>(m.value) + lse - static_cast<double>(row[static_cast<size_t>(token)]), m.index};
}

int32_t log_softmax(std::span<const float> row, std::span<float> out) {
  const RowMax m = row_max(row);
  const double shift = static_cast<double>(m.value) + log_sum_exp(row, m.value);
  for (size_t i = 0; i < row.size(); ++i) out[i] = static_cast<float>(static_cast<double>(row[i]) - shift);
  return m.index;
}

}  // namespace synapse::eval
