// What one logits row says about the token that came next: its negative
// log-likelihood under the row's softmax, and the row's top token. Sums in
// double over float exponentials, as llama-perplexity does, so the two
// engines' scores differ only by their logits.
#pragma once

#include <cstdint>
#include <span>

namespace synapse::eval {

struct RowScore {
  double nll = 0;       // -log softmax(row)[token]
  int32_t argmax = 0;   // the row's largest entry (the first of equals)
};

// `token` must index `row`.
RowScore score_row(std::span<const float> row, int32_t token);

// log softmax(row), written to `out` (as large as row); returns the row's
// argmax.
int32_t log_softmax(std::span<const float> row, std::span<float> out);

}  // namespace synapse::eval
