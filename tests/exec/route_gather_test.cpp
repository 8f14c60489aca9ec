// Scattering a routed region's outputs back to the step's rows: each
// gathered row lands on its token (moving later or staying in place), every
// other token's row is zero.
#include "exec/route_gather.h"

#include <gtest/gtest.h>

#include <vector>

namespace synapse::exec {
namespace {

// rows.size() gathered rows of `cols` floats, row i holding 100 * (i + 1) + c,
// then garbage (-1) up to `tokens` rows; scattered; compared with the rows
// each token should get.
void expect_scatter(const std::vector<int64_t>& rows, int64_t tokens) {
  constexpr int64_t kCols = 3;
  std::vector<float> x(static_cast<size_t>(tokens * kCols), -1.0f);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t c = 0; c < kCols; ++c) x[i * kCols + c] = 100.0f * static_cast<float>(i + 1) + static_cast<float>(c);
  scatter_rows(x.data(), kCols, rows, tokens);
  std::vector<float> want(x.size(), 0.0f);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t c = 0; c < kCols; ++c)
      want[rows[i] * kCols + c] = 100.0f * static_cast<float>(i + 1) + static_cast<float>(c);
  EXPECT_EQ(x, want);
}

TEST(RouteGather, ScatterPutsEachGatheredRowOnItsTokenAndZeroesTheOthers) {
  expect_scatter({0, 2, 3, 5}, 6);  // the first in place, the others moving by one and two rows
  expect_scatter({0, 1, 2}, 5);     // all in place, the rest zeroed
  expect_scatter({4}, 5);           // one row to the end
  expect_scatter({1, 2, 3, 4}, 5);  // each moving by one row, onto its neighbour's place
  expect_scatter({}, 3);            // nothing routed: all zero
}

}  // namespace
}  // namespace synapse::exec
