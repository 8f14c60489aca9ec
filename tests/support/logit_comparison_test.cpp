#include "support/logit_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace synapse::test {
namespace {

TEST(LogitComparison, EqualRowsDifferByNothing) {
  const std::vector<float> row = {0.5f, 3.0f, -1.0f, 2.0f};
  const RowComparison c = compare_row(row, row);
  EXPECT_EQ(c.max_abs_diff, 0.0f);
  EXPECT_TRUE(c.top1_agrees);
  EXPECT_FLOAT_EQ(c.peer_top2_gap, 1.0f);
  EXPECT_NEAR(c.kl, 0.0, 1e-15);
}

TEST(LogitComparison, SwappedTopTwoDisagreeWithTheExactKl) {
  const std::vector<float> peer = {0.0f, 1.0f}, ours = {1.0f, 0.0f};
  const RowComparison c = compare_row(peer, ours);
  EXPECT_FLOAT_EQ(c.max_abs_diff, 1.0f);
  EXPECT_FALSE(c.top1_agrees);
  // p = (1-s, s) with s = sigmoid(1), q = (s, 1-s): KL = (2s - 1) * 1.
  const double s = 1 / (1 + std::exp(-1.0));
  EXPECT_NEAR(c.kl, 2 * s - 1, 1e-12);
}

TEST(LogitComparison, AShiftOfTheWholeRowKeepsTheDistribution) {
  const std::vector<float> peer = {0.0f, 2.0f, 1.0f}, ours = {4.0f, 6.0f, 5.0f};
  const RowComparison c = compare_row(peer, ours);
  EXPECT_FLOAT_EQ(c.max_abs_diff, 4.0f);
  EXPECT_NEAR(c.kl, 0.0, 1e-12);
}

TEST(LogitComparison, ANanLogitIsAnInfiniteDifference) {
  const std::vector<float> peer = {0.0f, 1.0f, 2.0f}, ours = {0.0f, NAN, 2.0f};
  EXPECT_EQ(compare_row(peer, ours).max_abs_diff, INFINITY);
}

TEST(LogitComparison, OnlyRowsWithAGapAboveTheToleranceAreDecisive) {
  // Row 0: a clear winner, agreed. Row 1: a near-tie (gap 0.05), disagreed.
  // Row 2: a clear winner, disagreed.
  const std::vector<float> peer = {3, 0, 0, 1.00f, 1.05f, 0, 0, 2, 0};
  const std::vector<float> ours = {3, 0, 0, 1.05f, 1.00f, 0, 2, 0, 0};
  const LogitComparison s = compare_logits(peer, ours, 3, 0.1f);
  EXPECT_EQ(s.rows, 3u);
  EXPECT_EQ(s.top1_agree, 1u);
  EXPECT_EQ(s.decisive, 2u);
  EXPECT_EQ(s.decisive_agree, 1u);
  EXPECT_DOUBLE_EQ(s.decisive_agreement(), 0.5);
  EXPECT_FLOAT_EQ(s.max_abs_diff, 2.0f);
  EXPECT_EQ(s.worst_row, 2u);
  EXPECT_EQ(s.rows_over, 1u);  // row 2; row 1 differs by 0.05 only
  EXPECT_GT(s.max_kl, s.mean_kl);
}

TEST(LogitComparison, ARowOverTheToleranceIsDecisiveOnlyBeyondItsOwnBound) {
  // The top two swapped by 0.5: over a tolerance of 0.1, within a bound of 1.
  const std::vector<float> peer = {0.0f, 0.5f}, ours = {0.5f, 0.0f};
  EXPECT_EQ(compare_logits(peer, ours, 2, 0.1f).decisive, 1u);
  const LogitComparison bounded = compare_logits(peer, ours, 2, 0.1f, {}, 1.0f);
  EXPECT_EQ(bounded.rows_over, 1u);
  EXPECT_EQ(bounded.decisive, 0u);
}

TEST(LogitComparison, TheOracleGivesOursOnlyRowsWhereItSidesWithOurs) {
  // Row 0: the engines agree. Row 1: they differ, the oracle is ours.
  // Row 2: they differ, the oracle is the peer's. Row 3: all three differ.
  const std::vector<float> peer = {0, 1, 0, 1, 0, 1, 0, 1};
  const std::vector<float> ours = {0, 1, 2, 1, 2, 1, 2, 1};
  const std::vector<float> oracle = {0, 1, 2, 1, 0, 1, 4, 1};
  const std::vector<bool> given = rows_the_oracle_gives_ours(peer, ours, oracle, 2, 0.1f);
  EXPECT_EQ(given, (std::vector<bool>{false, true, false, false}));

  const LogitComparison s = compare_logits(peer, ours, 2, 0.1f, given);
  EXPECT_EQ(s.set_aside, 1u);
  EXPECT_EQ(s.rows, 3u);
  EXPECT_EQ(s.rows_over, 2u);  // rows 2 and 3
  EXPECT_EQ(s.worst_row, 2u);
  EXPECT_THROW(compare_logits(peer, ours, 2, 0.1f, {true}), std::invalid_argument);
}

TEST(LogitComparison, RootMeanSquareIsTheScale) {
  const std::vector<float> v = {3, -4, 3, -4};
  EXPECT_DOUBLE_EQ(root_mean_square(v), std::sqrt(12.5));
}

TEST(LogitComparison, RowsOfDifferentCountsAreRefused) {
  const std::vector<float> peer(6), ours(4);
  EXPECT_THROW(compare_logits(peer, ours, 2, 0.1f), std::invalid_argument);
}

}  // namespace
}  // namespace synapse::test
