#include "kernels/cpu/matvec_prefetch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace synapse::cpu {
namespace {

// A matrix of `rows` rows of `stride` bytes walked in passes of eight rows.
struct Walk {
  uint64_t stride;
  int64_t rows;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(stride * rows);
  const uint8_t* pass(int64_t p) const { return bytes.data() + p * 8 * stride; }
  const uint8_t* end() const { return bytes.data() + bytes.size(); }
};

TEST(MatvecPrefetch, LongRowsAskForTheNextPass) {
  const Walk w{5168, 64};  // a pass is 41 KiB: one pass on is far enough
  EXPECT_EQ(rows_ahead_target(w.pass(0), w.stride, 8, 68, 76, w.end()), w.pass(1));
  EXPECT_EQ(rows_ahead_target(w.pass(6), w.stride, 8, 68, 76, w.end()), w.pass(7));
}

TEST(MatvecPrefetch, ShortRowsAskForTheFirstPassAtLeast8KiBOn) {
  const Walk w{952, 64};  // a pass is 7616 bytes: two passes on
  EXPECT_EQ(rows_ahead_target(w.pass(0), w.stride, 8, 68, 14, w.end()), w.pass(2));
  const Walk tiny{64, 256};  // 512-byte passes: sixteen on
  EXPECT_EQ(rows_ahead_target(tiny.pass(0), tiny.stride, 8, 64, 1, tiny.end()), tiny.pass(16));
}

TEST(MatvecPrefetch, NothingPastTheMatrixIsAskedFor) {
  const Walk w{952, 64};  // eight passes
  EXPECT_NE(rows_ahead_target(w.pass(5), w.stride, 8, 68, 14, w.end()), nullptr);
  EXPECT_EQ(rows_ahead_target(w.pass(6), w.stride, 8, 68, 14, w.end()), nullptr);
  EXPECT_EQ(rows_ahead_target(w.pass(7), w.stride, 8, 68, 14, w.end()), nullptr);
  // A pass that starts mid-row (a later chunk of long rows) must fit its steps too.
  const uint8_t* mid = w.pass(5) + 476;
  EXPECT_NE(rows_ahead_target(mid, w.stride, 8, 68, 7, w.end()), nullptr);
  EXPECT_EQ(rows_ahead_target(mid, w.stride, 8, 68, 8, w.end()), nullptr);
}

}  // namespace
}  // namespace synapse::cpu
