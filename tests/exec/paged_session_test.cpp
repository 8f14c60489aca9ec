// Sessions under a memory budget: weights page through the residency
// manager, and every logit is the bits of the fully resident run, for a
// dense model in capacity mode (40% of its weight bytes), expert-paged MoE
// models (30% of their expert bytes), tables and products read in row
// slices, and sessions whose weight read failed once (a whole weight; a
// sliced expert run on gathered tokens). KV pages and the weight pool share
// the budget: pages come out of the cache, freed pages go back to it, and a
// page the cache cannot give fails with [kv].
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "support/alloc_counter.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::exec {
namespace {

std::string synth(const test::TempDir& dir, SynthOptions options) {
  if (options.preset.empty()) options.preset = "tiny";
  const std::string path = dir.file(options.arch + ".gguf");
  synth_model(options, path);
  return path;
}

// The tiny preset of `arch` in q8_0.
std::string synth_q8_model(const test::TempDir& dir, const std::string& arch) {
  SynthOptions options;
  options.arch = arch;
  options.type = "q8_0";
  return synth(dir, options);
}

SessionOptions all_logits_options() {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.all_logits = true;
  return options;
}

// The working set (KV, scratch, vectors, staging) plus `weights` bytes.
uint64_t budget_for(const Model& model, const SessionOptions& options, uint64_t weights) {
  const Session unlimited(model, options);
  const MemoryAdmission& admission = unlimited.memory();
  return admission.ledger.total() + admission.kv_reachable - admission.plan.weight_bytes + weights;
}

// Options whose budget holds the working set, every weight but the experts,
// and 30% of the expert bytes.
SessionOptions experts_at_thirty_percent(const Model& model, SessionOptions options) {
  const Session resident(model, options);
  const memory::ResidencyPlan& plan = resident.memory().plan;
  uint64_t experts = 0;
  for (const memory::Chunk& chunk : plan.chunks) experts += chunk.expert ? chunk.bytes : 0;
  EXPECT_GT(experts, 0u);
  options.memory.budget.bytes = budget_for(model, options, plan.weight_bytes - experts + experts * 3 / 10);
  return options;
}

// Every token's logits over a prompt, then 24 greedy decode steps.
std::vector<float> run(const Model& model, const SessionOptions& options) {
  Session session(model, options);
  const std::vector<int32_t> prompt = {1, 17, 300, 42, 5, 99, 260};
  std::vector<float> all = session.eval_all(prompt);
  std::span<const float> last(all.end() - session.vocab(), all.end());
  for (int step = 0; step < 24; ++step) {
    const auto best = static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin());
    last = session.eval({&best, 1});
    all.insert(all.end(), last.begin(), last.end());
  }
  return all;
}

void expect_paged_run_is_resident_run(const Model& model, SessionOptions paged) {
  const std::vector<float> resident = run(model, all_logits_options());
  Session probe(model, paged);
  ASSERT_TRUE(probe.memory().plan.paging) << probe.memory_plan();
  const std::vector<float> logits = run(model, paged);
  ASSERT_EQ(logits.size(), resident.size());
  for (size_t i = 0; i < logits.size(); ++i) ASSERT_EQ(logits[i], resident[i]) << "logit " << i;
}

TEST(PagedSession, DenseCapacityModeAtFortyPercentOfWeightsGivesTheResidentBits) {
  test::TempDir dir;
  SynthOptions o;
  o.arch = "qwen2";
  o.type = "q8_0";
  o.n_layer = 4;
  const Model model = load_model(synth(dir, o));
  SessionOptions paged = all_logits_options();
  paged.memory.slice_bytes = 64 << 10;  // the table and logits in several slices
  const Session resident(model, paged);
  paged.memory.budget.bytes = budget_for(model, paged, resident.memory().plan.weight_bytes * 2 / 5);
  expect_paged_run_is_resident_run(model, paged);
  Session session(model, paged);
  session.eval(std::vector<int32_t>{3, 4, 5});
  const memory::ResidencyCounters counters = session.residency()->counters();
  EXPECT_GT(counters.bytes_loaded, session.memory().plan.pinned_bytes);  // something paged
  EXPECT_LE(counters.peak_resident_bytes, session.memory().plan.pinned_bytes + session.memory().plan.pool_bytes);
}

class ExpertPagedSession : public ::testing::TestWithParam<const char*> {};

TEST_P(ExpertPagedSession, ThirtyPercentOfExpertBytesGivesTheResidentBits) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, GetParam()));
  expect_paged_run_is_resident_run(model, experts_at_thirty_percent(model, all_logits_options()));
}

INSTANTIATE_TEST_SUITE_P(Arches, ExpertPagedSession, ::testing::Values("olmoe", "mixtral", "qwen2moe", "qwen3moe"));

TEST(ExpertPagedSession, MidSizeOlmoeWithSixtyFourExpertsAtThirtyPercentGivesTheResidentBits) {
  test::TempDir dir;
  SynthOptions o;
  o.arch = "olmoe";
  o.type = "q8_0";
  o.n_layer = 2;
  o.n_embd = 128;
  o.n_ff = 64;
  o.n_expert = 64;
  o.n_expert_used = 8;
  const Model model = load_model(synth(dir, o));
  for (const char* policy : {"lru", "lfu"}) {
    SessionOptions options = all_logits_options();
    options.memory.residency.policy = policy;
    expect_paged_run_is_resident_run(model, experts_at_thirty_percent(model, options));
  }
}

TEST(PagedSession, BudgetBelowTheLargestRegionIsRejectedBeforeAnyCompute) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "llama"));
  SessionOptions options = all_logits_options();
  const Session resident(model, options);
  options.memory.budget.bytes = budget_for(model, options, resident.memory().plan.min_pool_bytes - 1);
  try {
    Session session(model, options);
    FAIL() << "a budget below the largest region was admitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_EQ(e.subject(), "weights");
  }
  options.memory.budget.bytes = 1 << 20;  // not even the KV state
  try {
    Session session(model, options);
    FAIL() << "a budget below the KV state was admitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_EQ(e.subject(), "kv");
  }
}

TEST(PagedSession, PagedDecodeStepsAllocateNothing) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "olmoe"));
  Session session(model, experts_at_thirty_percent(model, all_logits_options()));
  session.scheduler().set_listener([](const RegionEvent&, std::span<const TensorRef>) {});
  session.eval(std::vector<int32_t>{1, 2, 3});
  const std::vector<int32_t> tokens{4, 5, 6, 7, 8, 9, 10, 11};
  session.eval(std::span(tokens).first(1));  // warm-up
  test::AllocationCounter counter;
  for (size_t t = 1; t < tokens.size(); ++t) session.eval(std::span(tokens).subspan(t, 1));
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_GT(session.residency()->counters().loads, 0u);
}

// Options for KV in pages of two rows whose pinned weights leave room for
// one page: the pages past it must come out of the weight pool.
SessionOptions kv_from_the_pool(SessionOptions options) {
  options.kv.page_rows = 2;
  options.memory.kv_positions = 1;
  return options;
}

TEST(PagedSession, KvPagesComeOutOfTheWeightCacheAndGoBackWithTheResidentBits) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "olmoe"));
  const SessionOptions options = experts_at_thirty_percent(model, kv_from_the_pool(all_logits_options()));
  expect_paged_run_is_resident_run(model, options);
  Session session(model, options);
  const memory::MemoryLedger& ledger = session.memory().ledger;
  const uint64_t pool = session.residency()->counters().pool_bytes;
  EXPECT_EQ(pool, session.memory().plan.pool_bytes);
  EXPECT_EQ(ledger.total(), ledger.budget());  // the pool took all the rest
  std::vector<int32_t> tokens(31);
  for (size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int32_t>((t * 37 + 11) % 200);
  session.eval(std::span(tokens).first(7));
  for (size_t t = 7; t < tokens.size(); ++t) session.eval(std::span(tokens).subspan(t, 1));
  const uint64_t kv = session.kv().bytes_allocated();
  EXPECT_GT(kv, session.memory().kv_reachable);
  memory::ResidencyCounters counters = session.residency()->counters();
  EXPECT_EQ(counters.pool_bytes, pool - kv);  // every page was lent by the pool
  EXPECT_LE(counters.resident_bytes, session.memory().plan.pinned_bytes + counters.pool_bytes);
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), kv);
  EXPECT_EQ(ledger.total(), ledger.budget());
  session.rewind(16);  // pages wholly past position 16 go back to the pool
  EXPECT_EQ(session.residency()->counters().pool_bytes, pool - session.kv().bytes_allocated());
  EXPECT_EQ(session.kv().bytes_allocated(), session.kv().bytes_for(16));
  session.reset();
  EXPECT_EQ(session.residency()->counters().pool_bytes, pool);
  EXPECT_EQ(ledger.reserved(memory::MemoryCategory::Kv), 0u);
  EXPECT_EQ(ledger.total(), ledger.budget());
}

TEST(PagedSession, KvPageTheWeightCacheCannotGiveFailsWithKvAndTheSessionStaysUsable) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "olmoe"));
  SessionOptions options = kv_from_the_pool(all_logits_options());
  {
    const Session resident(model, options);
    // The pool can shrink to one region and no further.
    options.memory.budget.bytes = budget_for(model, options, resident.memory().plan.min_pool_bytes);
  }
  Session session(model, options), fresh(model, all_logits_options());
  ASSERT_TRUE(session.memory().plan.paging);
  const std::vector<int32_t> prompt{1, 2, 3};
  session.eval(std::span(prompt).first(2));  // the first page of each slot
  try {
    session.eval(std::span(prompt).subspan(2, 1));
    FAIL() << "a KV page was had past what the pool can give";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_EQ(e.subject(), "kv");
  }
  EXPECT_EQ(session.position(), 2);
  EXPECT_EQ(session.kv().bytes_allocated(), session.kv().bytes_for(2));
  session.rewind(1);
  fresh.eval(std::span(prompt).first(1));
  const int32_t next = 5;
  const std::span<const float> got = session.eval(std::span(&next, 1));
  const std::span<const float> want = fresh.eval(std::span(&next, 1));
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
}

// Fails, while *fail is set, every read that touches file bytes [begin, end).
// The flag is atomic: the residency's I/O thread reads it, and a read queued
// before an eval failed may still run when the test clears it.
class FailingFile final : public memory::ChunkFile {
 public:
  FailingFile(const std::string& path, bool direct, const std::atomic<bool>* fail, uint64_t begin = 0,
              uint64_t end = UINT64_MAX)
      : ChunkFile(path, direct), fail_(fail), begin_(begin), end_(end) {}

 protected:
  ssize_t pread_once(void* dst, size_t length, uint64_t offset, bool direct) override {
    if (*fail_ && offset < end_ && offset + length > begin_) {
      errno = EIO;
      return -1;
    }
    return ChunkFile::pread_once(dst, length, offset, direct);
  }

 private:
  const std::atomic<bool>* fail_;
  uint64_t begin_, end_;
};

// While *fail is set, evaluating prompt fails with Error(Io) and leaves the
// session at position 0; once reads succeed, its logits are reference's.
void expect_read_error_leaves_the_session_as_before(Session& session, Session& reference, std::atomic<bool>& fail,
                                                     const std::vector<int32_t>& prompt) {
  fail = true;
  try {
    session.eval_all(prompt);
    FAIL() << "eval succeeded through a failing read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  EXPECT_EQ(session.position(), 0);
  fail = false;
  EXPECT_EQ(session.eval_all(prompt), reference.eval_all(prompt));
}

TEST(PagedSession, ReadErrorFailsTheEvalAndLeavesTheSessionUsable) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "llama"));
  SessionOptions paged = all_logits_options();
  const Session resident(model, paged);
  paged.memory.budget.bytes = budget_for(model, paged, resident.memory().plan.min_pool_bytes * 2);
  std::atomic<bool> fail{false};
  paged.memory.residency.open_file = [&fail](const std::string& path, bool direct) {
    return std::make_unique<FailingFile>(path, direct, &fail);
  };
  paged.memory.prefetch_depth = 0;
  Session session(model, paged);
  Session reference(model, all_logits_options());
  expect_read_error_leaves_the_session_as_before(session, reference, fail, {5, 6, 7});
}

TEST(PagedSession, ReadErrorLoadingASlicedExpertLeavesTheSessionAsBefore) {
  test::TempDir dir;
  const Model model = load_model(synth_q8_model(dir, "mixtral"));
  SessionOptions paged = all_logits_options();
  uint64_t largest_expert = 0;
  {
    const Session resident(model, paged);
    for (const memory::Chunk& chunk : resident.memory().plan.chunks)
      if (chunk.expert) largest_expert = std::max(largest_expert, chunk.bytes);
  }
  paged.memory.slice_bytes = largest_expert / 3;  // every expert matrix is read in slices
  paged = experts_at_thirty_percent(model, paged);
  paged.memory.prefetch_depth = 0;
  // The file bytes of every sliced expert weight.
  uint64_t begin = UINT64_MAX, end = 0;
  {
    const Session probe(model, paged);
    const memory::ResidencyPlan& plan = probe.memory().plan;
    for (const memory::Chunk& chunk : plan.chunks) {
      if (!chunk.expert || !plan.weights[chunk.weight.index].sliced) continue;
      begin = std::min(begin, chunk.offset);
      end = std::max(end, chunk.offset + chunk.bytes);
    }
  }
  ASSERT_LT(begin, end) << "no expert weight is sliced";
  std::atomic<bool> fail{false};
  paged.memory.residency.open_file = [&](const std::string& path, bool direct) {
    return std::make_unique<FailingFile>(path, direct, &fail, begin, end);
  };
  Session session(model, paged);
  Session reference(model, all_logits_options());
  // A chunk of tokens: the experts run on the tokens gathered for them.
  expect_read_error_leaves_the_session_as_before(session, reference, fail, {1, 17, 300, 42, 5, 99, 260});
  const int32_t next = 7;
  const std::span<const float> got = session.eval({&next, 1});
  const std::span<const float> want = reference.eval({&next, 1});
  ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
}

}  // namespace
}  // namespace synapse::exec
