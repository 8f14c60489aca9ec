// KV state: pages on demand in the session's encoding, a written bit per
// row, truncation, and pages charged to the memory ledger.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "encoding/fp16.h"
#include "exec/kv_state.h"
#include "ir/tiny_graphs.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

TEST(ExecKvState, AllocatesPagesOnlyForWrittenPositions) {
  const ir::Graph graph = ir::testing::build_dense();  // two slots of width 4
  KvState kv(graph, 131072, KvLayout{.page_rows = 256});
  EXPECT_EQ(kv.pages_allocated(), 0);
  const std::vector<float> row(4, 1.0f);
  for (int64_t p = 0; p < 4096; ++p) kv.write(ir::SlotId{0}, p, row.data());
  EXPECT_EQ(kv.pages_allocated(), 16);
  kv.write(ir::SlotId{1}, 100000, row.data());
  EXPECT_EQ(kv.pages_allocated(), 17);
  EXPECT_THROW(kv.write(ir::SlotId{0}, 131072, row.data()), Error);
}

TEST(ExecKvState, ViewReadsRowsInTheLayoutsEncodingAndTruncationMakesHoles) {
  const ir::Graph graph = ir::testing::build_dense();
  for (const Encoding encoding : {Encoding::F16, Encoding::F32}) {
    KvState kv(graph, 32, KvLayout{encoding, encoding, 4});
    for (int64_t p = 0; p < 10; ++p) {
      const std::vector<float> row{0.1f * p, 1, 2, 3};
      kv.write(ir::SlotId{0}, p, row.data());
    }
    const ref::StateRows view = kv.rows(ir::SlotId{0}, 10);
    EXPECT_EQ(view.encoding, encoding);
    for (int64_t p = 0; p < 10; ++p) {
      EXPECT_TRUE(view.has(p));
      float row[4];
      dequantize_row(encoding, view.row(p), row, 4);
      EXPECT_EQ(row[0], encoding == Encoding::F16 ? fp16_to_fp32(fp32_to_fp16(0.1f * p)) : 0.1f * p);
      EXPECT_EQ(row[3], 3.0f);
    }
    kv.truncate(5);
    const ref::StateRows after = kv.rows(ir::SlotId{0}, 10);
    EXPECT_TRUE(after.has(4));
    EXPECT_FALSE(after.has(5));
    EXPECT_FALSE(after.has(9));
    EXPECT_FALSE(after.has(20));  // never allocated
  }
}

TEST(ExecKvState, F16PagesTakeTwoBytesAnElementAndABitARow) {
  const ir::Graph graph = ir::testing::build_dense();  // two slots of width 4
  KvState kv(graph, 1024, KvLayout{.page_rows = 256});
  const std::vector<float> row(4, 1.0f);
  kv.write(ir::SlotId{0}, 0, row.data());
  EXPECT_EQ(kv.bytes_allocated(), 256u * 4 * 2 + 256 / 8);
  EXPECT_EQ(kv.bytes_for(300), 2 * 2 * kv.bytes_allocated());  // two pages of each slot
}

TEST(ExecKvState, Q8_0NeedsWholeBlocksPerHead) {
  const ir::Graph graph = ir::testing::build_dense();  // heads of 2 elements
  EXPECT_THROW(KvState(graph, 32, KvLayout{Encoding::Q8_0, Encoding::F16}), Error);
  EXPECT_THROW(KvState(graph, 32, KvLayout{Encoding::Q4_0, Encoding::F16}), Error);
}

TEST(ExecKvState, PagesPastTheReservationAreChargedAndRefusedBeyondTheBudget) {
  const ir::Graph graph = ir::testing::build_dense();
  KvState kv(graph, 64, KvLayout{.page_rows = 4});
  const uint64_t page = kv.bytes_for(1) / 2;  // one slot's page
  memory::MemoryLedger ledger(3 * page);
  ledger.reserve(memory::MemoryCategory::Kv, 2 * page);  // what admission charged
  kv.charge_pages_to(&ledger);
  const std::vector<float> row(4, 1.0f);
  kv.write(ir::SlotId{0}, 0, row.data());
  kv.write(ir::SlotId{1}, 0, row.data());
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), 2 * page);  // within the reservation
  kv.write(ir::SlotId{0}, 4, row.data());                            // a page crossing: charged
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), 3 * page);
  try {
    kv.write(ir::SlotId{1}, 4, row.data());
    FAIL() << "a page past the budget was allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_NE(std::string(e.what()).find("[kv]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(kv.pages_allocated(), 3);
  EXPECT_FALSE(kv.rows(ir::SlotId{1}, 5).has(4));
}

}  // namespace
}  // namespace synapse::exec
