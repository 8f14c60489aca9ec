// KV pages in a session: allocated only when a step crosses onto a new
// page, with the results of an unpaged store; admission leaves room for the
// KV of the positions a run is expected to reach, not the whole context,
// and charges pages only as they are written; a page the budget cannot hold
// fails the eval with InsufficientMemory [kv] and leaves the session as it
// was.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"
#include "support/alloc_counter.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

using ir::testing::build_dense;
using testing::make_model;

SessionOptions paged_by(int64_t page_rows) {
  SessionOptions options;
  options.kv.page_rows = page_rows;
  return options;
}

TEST(ExecKvPaging, DecodeAllocatesOnlyOnPageCrossingsAndEqualsTheUnpagedStore) {
  const Model model = make_model(build_dense());  // two slots, max_ctx 32
  Session paged(model, paged_by(4)), unpaged(model, paged_by(32));
  const std::vector<int32_t> prompt{1, 2, 3};
  paged.eval(prompt);
  unpaged.eval(prompt);
  for (int32_t position = 3; position < 14; ++position) {
    const int32_t token = (position * 7 + 3) % 10;
    size_t allocations = 0;
    const int64_t pages_before = paged.kv().pages_allocated();
    std::vector<float> logits;
    {
      test::AllocationCounter counter;
      const std::span<const float> row = paged.eval(std::span(&token, 1));
      allocations = counter.count();
      logits.assign(row.begin(), row.end());  // outside the count: the test's own copy
    }
    // Pages are mapped, not taken from the heap; a step onto a new page maps
    // that page in each of the two slots.
    EXPECT_EQ(allocations, 0u) << "position " << position;
    EXPECT_EQ(paged.kv().pages_allocated() - pages_before, position % 4 == 0 ? 2 : 0) << "position " << position;
    const std::span<const float> expected = unpaged.eval(std::span(&token, 1));
    ASSERT_EQ(logits, std::vector<float>(expected.begin(), expected.end())) << "position " << position;
  }
  EXPECT_EQ(paged.kv().pages_allocated(), 2 * 4);
}

TEST(ExecKvPaging, AdmissionLeavesRoomForTheReachableKvAndChargesOnlyPagesWritten) {
  ir::testing::DenseConfig config;
  config.max_ctx = 32768;
  const Model model = make_model(build_dense(config));
  SessionOptions reach = paged_by(256);
  reach.memory.kv_positions = 116;  // a 100-token prompt and 16 to generate
  Session short_run(model, reach);
  const Session whole(model, paged_by(256));
  EXPECT_EQ(short_run.memory().kv_reachable, short_run.kv().bytes_for(256));
  EXPECT_EQ(whole.memory().kv_reachable, whole.kv().bytes_for(32768));
  EXPECT_EQ(whole.kv().bytes_for(32768), 128 * short_run.kv().bytes_for(256));
  EXPECT_EQ(short_run.memory().ledger.reserved(memory::MemoryCategory::Kv), 0u);
  short_run.eval(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(short_run.memory().ledger.reserved(memory::MemoryCategory::Kv), short_run.kv().bytes_for(1));
}

TEST(ExecKvPaging, PageTheBudgetCannotHoldFailsWithKvAndTheSessionStaysUsable) {
  const Model model = make_model(build_dense());
  SessionOptions options = paged_by(4);
  options.memory.kv_positions = 4;  // one page of each slot charged up front
  {
    const Session unlimited(model, options);
    // Room for the first page of each slot and one more page, of one slot only.
    options.memory.budget.bytes = unlimited.memory().ledger.total() + unlimited.kv().bytes_for(1) * 3 / 2;
  }
  Session session(model, options), fresh(model, paged_by(4));
  const std::vector<int32_t> prompt{1, 2, 3, 4};
  session.eval(prompt);
  const int32_t next = 5;
  try {
    session.eval(std::span(&next, 1));  // position 4: a second page for both slots
    FAIL() << "the budget held a page it has no room for";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_NE(std::string(e.what()).find("[kv]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(session.position(), 4);
  // Usable: within its pages it goes on as a fresh session would.
  session.rewind(3);
  fresh.eval(std::span(prompt).first(3));
  const std::span<const float> got = session.eval(std::span(&next, 1));
  const std::span<const float> expected = fresh.eval(std::span(&next, 1));
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), std::vector<float>(expected.begin(), expected.end()));
}

TEST(ExecKvPaging, EveryTokensLogitsNeedASessionPlannedForThem) {
  ir::testing::DenseConfig config;
  config.vocab = 1000;  // logits rows outweigh the other activations
  const Model model = make_model(build_dense(config));
  Session one_row(model);
  EXPECT_THROW(one_row.eval_all(std::vector<int32_t>{1, 2}), Error);
  EXPECT_EQ(one_row.position(), 0);
  SessionOptions all;
  all.all_logits = true;
  Session all_rows(model, all);
  const std::vector<float> rows = all_rows.eval_all(std::vector<int32_t>{1, 2});
  const std::span<const float> last = one_row.eval(std::vector<int32_t>{1, 2});
  EXPECT_EQ(std::vector<float>(rows.end() - 1000, rows.end()), std::vector<float>(last.begin(), last.end()));
  // Buffers for one logits row where the chunk (4 tokens) would need four.
  EXPECT_LE(one_row.scheduler().scratch_bytes() + 3 * 1000 * sizeof(float), all_rows.scheduler().scratch_bytes());
}

}  // namespace
}  // namespace synapse::exec
