#include "kernels/cpu/matvec_prefetch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace synapse::cpu {
namespace {

// A matrix of `rows` rows of `stride` bytes walked in passes of eight rows.
struct PassedMatrix {
  uint64_t stride;
  int64_t rows;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(stride * rows);
  const char* pass(int64_t p) const { return reinterpret_cast<const char*>(bytes.data() + p * 8 * stride); }
  const uint8_t* first(int64_t p) const { return bytes.data() + p * 8 * stride; }
  const uint8_t* end() const { return bytes.data() + bytes.size(); }
};

// Eight rows of 68-byte steps: 544 bytes a step, so 8 KiB ahead is 16 steps.
constexpr uint64_t kStep = 68;

TEST(MatvecPrefetch, LongRowsAskForTheStep8KiBAheadInTheSamePassThenTheNext) {
  const PassedMatrix m{5168, 64};  // 76 steps a pass
  const WalkAhead walk(m.first(0), m.stride, 8, kStep, 76, m.end());
  EXPECT_EQ(walk.target(0), m.pass(0) + 16 * kStep);
  EXPECT_EQ(walk.target(59), m.pass(0) + 75 * kStep);
  EXPECT_EQ(walk.target(60), m.pass(1));
  EXPECT_EQ(walk.target(75), m.pass(1) + 15 * kStep);
}

TEST(MatvecPrefetch, ShortRowsAskForAStepOfAPassFurtherDown) {
  const PassedMatrix m{952, 64};  // 14 steps a pass: 16 steps on is the next pass's third step
  const WalkAhead walk(m.first(0), m.stride, 8, kStep, 14, m.end());
  EXPECT_EQ(walk.target(0), m.pass(1) + 2 * kStep);
  EXPECT_EQ(walk.target(11), m.pass(1) + 13 * kStep);
  EXPECT_EQ(walk.target(12), m.pass(2));
  const PassedMatrix tiny{64, 256};  // one 64-byte step, 512-byte passes: sixteen on
  EXPECT_EQ(WalkAhead(tiny.first(0), tiny.stride, 8, 64, 1, tiny.end()).target(0), tiny.pass(16));
}

TEST(MatvecPrefetch, NothingPastTheMatrixIsAskedFor) {
  const PassedMatrix m{952, 64};  // eight passes
  const WalkAhead sixth(m.first(6), m.stride, 8, kStep, 14, m.end());
  EXPECT_EQ(sixth.target(11), m.pass(7) + 13 * kStep);  // the last pass's last step
  EXPECT_EQ(sixth.target(12), nullptr);
  EXPECT_EQ(WalkAhead(m.first(7), m.stride, 8, kStep, 14, m.end()).target(0), nullptr);
  // A pass that starts mid-row (a later chunk of long rows): its target's
  // rows must end in the matrix too.
  const WalkAhead mid(m.first(5) + 476, m.stride, 8, kStep, 7, m.end());  // 16 steps: two passes and two steps
  EXPECT_EQ(mid.target(0), m.pass(7) + 476 + 2 * kStep);
  EXPECT_EQ(mid.target(4), m.pass(7) + 476 + 6 * kStep);  // the matrix's last bytes
  EXPECT_EQ(mid.target(5), nullptr);
}

TEST(MatvecPrefetch, AnUnsetWalkAsksForNothing) { EXPECT_EQ(WalkAhead().target(0), nullptr); }

}  // namespace
}  // namespace synapse::cpu
