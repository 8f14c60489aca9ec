// Several sequences in one session: batched steps give each sequence the
// bits of its solo run, forks share KV pages until they write, and branches
// commit or roll back what they evaluated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

SessionOptions batch_options(int64_t logits_rows = 1, int64_t page_rows = KvLayout::kDefaultPageRows) {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.logits_rows = logits_rows;
  options.kv.page_rows = page_rows;
  return options;
}

// Sequence i's prompt: its own length and ids.
std::vector<int32_t> prompt_of(int i) {
  std::vector<int32_t> tokens(static_cast<size_t>(3 + (i * 5) % 11));
  for (size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int32_t>((i * 37 + t * 11 + 1) % 250);
  return tokens;
}

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr int kDecodeSteps = 6;

// Each sequence's logits after its prompt, then after each of its greedy
// decode steps, evaluated alone.
std::vector<std::vector<float>> solo_run(const Model& model, int i) {
  Session session(model, batch_options());
  std::vector<std::vector<float>> rows;
  std::span<const float> logits = session.eval(prompt_of(i));
  for (int step = 0;; ++step) {
    rows.emplace_back(logits.begin(), logits.end());
    if (step == kDecodeSteps) return rows;
    const int32_t next = argmax(logits);
    logits = session.eval({&next, 1});
  }
}

class SessionBatch : public ::testing::TestWithParam<std::string> {
 protected:
  test::TempDir dir_;
};

TEST_P(SessionBatch, EverySequenceOfABatchGetsTheBitsOfItsSoloRun) {
  const Model model = load_model(test::write_tiny_model(dir_, GetParam()));
  for (int sequences : {1, 2, 7, 16}) {
    SCOPED_TRACE(std::to_string(sequences) + " sequences");
    Session session(model, batch_options(sequences));
    std::vector<SequenceId> ids = {0};
    while (static_cast<int>(ids.size()) < sequences) ids.push_back(session.fork(0));
    std::vector<std::vector<int32_t>> prompts, next(static_cast<size_t>(sequences), std::vector<int32_t>(1));
    std::vector<SequenceTokens> batch;
    for (int i = 0; i < sequences; ++i) prompts.push_back(prompt_of(i));
    for (int i = 0; i < sequences; ++i) batch.push_back({ids[static_cast<size_t>(i)], prompts[static_cast<size_t>(i)]});
    std::vector<std::vector<std::vector<float>>> solo;
    for (int i = 0; i < sequences; ++i) solo.push_back(solo_run(model, i));

    std::span<const float> logits = session.eval_batch(batch);  // every prompt in one step
    const auto vocab = static_cast<size_t>(session.vocab());
    for (int step = 0;; ++step) {
      ASSERT_EQ(logits.size(), static_cast<size_t>(sequences) * vocab);
      for (int i = 0; i < sequences; ++i) {
        const auto row = logits.subspan(static_cast<size_t>(i) * vocab, vocab);
        ASSERT_TRUE(same_bits(row, solo[static_cast<size_t>(i)][static_cast<size_t>(step)]))
            << "sequence " << i << ", step " << step;
        next[static_cast<size_t>(i)][0] = argmax(row);
        batch[static_cast<size_t>(i)].tokens = next[static_cast<size_t>(i)];
      }
      if (step == kDecodeSteps) break;
      logits = session.eval_batch(batch);
    }
    for (int i = 0; i < sequences; ++i)
      EXPECT_EQ(session.position(ids[static_cast<size_t>(i)]),
                static_cast<int64_t>(prompt_of(i).size()) + kDecodeSteps);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, SessionBatch, ::testing::Values("qwen2", "olmoe"));

TEST(SessionFork, AForkAllocatesNoPageUntilItWritesAndNeitherSeesTheOthersTokens) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "llama"));
  Session session(model, batch_options(2, 8));
  const std::vector<int32_t> prefix = {1, 20, 31, 42, 53, 64, 75, 86, 97};  // two pages of 8
  session.eval(prefix);
  const memory::MemoryLedger& ledger = session.memory().ledger;
  const uint64_t before = ledger.reserved(memory::MemoryCategory::Kv);

  const SequenceId fork = session.fork(0);
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), before);
  EXPECT_EQ(session.position(fork), session.position(0));

  // Each writes into the shared second page: one copy per slot, for the
  // first writer; the other then holds its page alone.
  const int32_t a = 5, b = 6;
  const std::span<const float> fork_logits = session.eval_batch(std::vector<SequenceTokens>{{fork, {&a, 1}}});
  const std::vector<float> fork_row(fork_logits.begin(), fork_logits.end());
  const uint64_t one_copy = ledger.reserved(memory::MemoryCategory::Kv) - before;
  EXPECT_GT(one_copy, 0u);
  // The fork holds the shared first page and its copy of the second.
  EXPECT_EQ(2 * one_copy, session.kv(fork).bytes_allocated());
  const std::vector<float> main_row = [&] {
    const std::span<const float> row = session.eval({&b, 1});
    return std::vector<float>(row.begin(), row.end());
  }();
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv) - before, one_copy);

  // Against sessions that never shared anything.
  Session alone_a(model, batch_options()), alone_b(model, batch_options());
  alone_a.eval(prefix);
  alone_b.eval(prefix);
  EXPECT_TRUE(same_bits(fork_row, alone_a.eval({&a, 1})));
  EXPECT_TRUE(same_bits(main_row, alone_b.eval({&b, 1})));

  // Dropping the fork frees the page it held alone.
  session.drop(fork);
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), before);
  EXPECT_THROW(session.position(fork), Error);
}

TEST(SessionBranch, CommitPrefixKeepsKTokensAndRollbackForgetsTheBranch) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2"));
  const std::vector<int32_t> prompt = prompt_of(2), drafts = {7, 8, 9, 10};
  for (int64_t keep : {0, 1, 2, 4}) {
    SCOPED_TRACE("commit " + std::to_string(keep));
    Session session(model, batch_options(1, 4));
    session.eval(prompt);
    session.begin_branch();
    session.eval(drafts);
    if (keep == 0) session.rollback_tail();
    else session.commit_prefix(keep);
    EXPECT_EQ(session.position(), static_cast<int64_t>(prompt.size()) + keep);
    // The next token sees exactly the committed prefix.
    const int32_t next = 3;
    const std::span<const float> got = session.eval({&next, 1});
    Session clean(model, batch_options(1, 4));
    std::vector<int32_t> committed = prompt;
    committed.insert(committed.end(), drafts.begin(), drafts.begin() + keep);
    clean.eval(committed);
    EXPECT_TRUE(same_bits(got, clean.eval({&next, 1})));
  }
  Session session(model, batch_options());
  EXPECT_THROW(session.commit_prefix(0), Error);  // no branch
  session.eval(prompt);
  session.begin_branch();
  EXPECT_THROW(session.begin_branch(), Error);
  EXPECT_THROW(session.commit_prefix(1), Error);  // nothing evaluated since
}

TEST(SessionBatch, RefusesBadBatchesBeforeAnyCompute) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "llama"));
  Session session(model, batch_options(2));
  const SequenceId other = session.fork(0);
  const int32_t token = 1;
  const std::span<const int32_t> one(&token, 1);
  EXPECT_THROW(session.eval_batch(std::vector<SequenceTokens>{}), Error);
  EXPECT_THROW(session.eval_batch(std::vector<SequenceTokens>{{0, one}, {0, one}}), Error);      // twice
  EXPECT_THROW(session.eval_batch(std::vector<SequenceTokens>{{0, one}, {other, one}, {0, one}}), Error);
  EXPECT_THROW(session.eval_batch(std::vector<SequenceTokens>{{0, one}, {42, one}}), Error);     // unknown
  EXPECT_THROW(session.eval_batch(std::vector<SequenceTokens>{{0, {}}}), Error);                 // no tokens
  EXPECT_THROW(session.drop(0), Error);
  EXPECT_EQ(session.position(0), 0);
  EXPECT_EQ(session.position(other), 0);
  session.eval_batch(std::vector<SequenceTokens>{{0, one}, {other, one}});
  EXPECT_EQ(session.position(other), 1);
}

}  // namespace
}  // namespace synapse::exec
