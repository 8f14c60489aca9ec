// Teacher-forced comparison of two engines' logits rows for the same token
// ids: per position the largest absolute difference, whether the argmax
// agrees, and KL(peer || ours) of the rows' softmax; summed up over a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace synapse::test {

struct RowComparison {
  float max_abs_diff = 0;
  bool top1_agrees = false;
  float peer_top2_gap = 0;  // the peer's best logit minus its second best
  double kl = 0;            // KL(softmax(peer) || softmax(ours)), nats
};

// Rows of equal length, at least two entries.
RowComparison compare_row(std::span<const float> peer, std::span<const float> ours);

struct LogitComparison {
  size_t rows = 0;          // compared: the set-aside ones are not
  size_t set_aside = 0;
  float max_abs_diff = 0;   // over every row
  size_t worst_row = 0;     // where max_abs_diff is
  size_t rows_over = 0;     // rows whose max_abs_diff exceeds the tolerance
  size_t top1_agree = 0;    // rows whose argmax agrees
  size_t decisive = 0;      // rows whose peer top-2 gap exceeds what the row may differ by
  size_t decisive_agree = 0;
  double mean_kl = 0;
  double max_kl = 0;

  // Top-1 agreement over the decisive rows (1 when there are none).
  double decisive_agreement() const;
  // "max|d| 0.0012 (row 17, 0 rows over), top-1 200/200 (decisive 198/198), KL mean 1e-07 max 3e-06"
  std::string summary() const;
};

// sqrt(mean(v^2)): the scale of a run's logits.
double root_mean_square(std::span<const float> values);

// `peer` and `ours` hold rows of `vocab` logits back to back, as many in each.
// A row counts as over where its largest difference exceeds `tolerance`,
// and as decisive where the peer's top-2 gap exceeds the difference the row
// is allowed: `tolerance`, or for a row over it `over_bound` (rows over are
// bounded apart, as a mixture of experts' routing flips are; by default
// `tolerance`). Rows marked in `set_aside` (empty: none) are left out of
// every figure but the set-aside count.
LogitComparison compare_logits(std::span<const float> peer, std::span<const float> ours, size_t vocab,
                               float tolerance, const std::vector<bool>& set_aside = {},
                               std::optional<float> over_bound = std::nullopt);

// The rows where `ours` and `peer` differ by more than `tolerance` while
// `ours` is within it of `oracle` (a third computation of the same rows):
// there the oracle sides with ours.
std::vector<bool> rows_the_oracle_gives_ours(std::span<const float> peer, std::span<const float> ours,
                                             std::span<const float> oracle, size_t vocab, float tolerance);

}  // namespace synapse::test
