// KV state: pages on demand, rounding to the slot dtype, truncation.
#include <gtest/gtest.h>

#include <vector>

#include "exec/kv_state.h"
#include "ir/tiny_graphs.h"
#include "kernels/encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

TEST(ExecKvState, AllocatesPagesOnlyForWrittenPositions) {
  const ir::Graph graph = ir::testing::build_dense();  // two slots of width 4
  KvState kv(graph, 131072, 256);
  EXPECT_EQ(kv.pages_allocated(), 0);
  const std::vector<float> row(4, 1.0f);
  for (int64_t p = 0; p < 4096; ++p) kv.write(ir::SlotId{0}, p, row.data());
  EXPECT_EQ(kv.pages_allocated(), 16);
  kv.write(ir::SlotId{1}, 100000, row.data());
  EXPECT_EQ(kv.pages_allocated(), 17);
  EXPECT_THROW(kv.write(ir::SlotId{0}, 131072, row.data()), Error);
}

TEST(ExecKvState, ViewReadsPagedRowsRoundedToTheSlotType) {
  const ir::Graph graph = ir::testing::build_dense();  // F16 slots
  KvState kv(graph, 32, 4);
  for (int64_t p = 0; p < 10; ++p) {
    const std::vector<float> row{0.1f * p, 1, 2, 3};
    kv.write(ir::SlotId{0}, p, row.data());
  }
  const ref::StateRows view = kv.rows(ir::SlotId{0}, 10);
  for (int64_t p = 0; p < 10; ++p) {
    EXPECT_TRUE(view.has(p));
    EXPECT_EQ(view.row(p)[0], fp16_to_fp32(fp32_to_fp16(0.1f * p)));
    EXPECT_EQ(view.row(p)[3], 3.0f);
  }
  kv.truncate(5);
  const ref::StateRows after = kv.rows(ir::SlotId{0}, 10);
  EXPECT_TRUE(after.has(4));
  EXPECT_FALSE(after.has(5));
  EXPECT_FALSE(after.has(9));
  EXPECT_FALSE(after.has(20));  // never allocated
}

}  // namespace
}  // namespace synapse::exec
