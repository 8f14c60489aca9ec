// synapse run under --mem-budget: --plan says what stays resident and what
// pages; a paged run prints the ids of the resident run and its trace
// carries the paging counters into `synapse trace`; a budget that cannot
// hold the session exits 3 naming the category, and a budget that does not
// parse is a usage error, as is a KV cache type other than f16, q8_0, f32.
#include <gtest/gtest.h>

#include "support/command_runner.h"
#include "support/test_files.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

const std::vector<std::string> kSmallSession = {"-c", "64", "--ubatch-size", "8"};

std::vector<std::string> run_args(const std::string& model, std::vector<std::string> more) {
  std::vector<std::string> args = {"run", "-m", model, "--tokens", "1 17 300", "-n", "12", "--temp", "0",
                                   "--ignore-eos", "--ids"};
  args.insert(args.end(), kSmallSession.begin(), kSmallSession.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(MemoryCli, PlanShowsResidentAndPagedWeights) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const auto out = test::run_synapse(run_args(model, {"--mem-budget", "60%", "--plan"}));
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_NE(out.out.find("memory budget:"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("through a pool of"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("Expert (8): resident"), std::string::npos) << out.out;
}

TEST(MemoryCli, PagedRunGivesTheResidentIdsAndItsTraceCountsLoads) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const std::string trace = dir.file("trace.jsonl");
  const auto resident = test::run_synapse(run_args(model, {}));
  ASSERT_EQ(resident.exit_code, 0);
  for (const char* policy : {"lru", "lfu"}) {
    const auto paged =
        test::run_synapse(run_args(model, {"--mem-budget", "60%", "--cache-policy", policy, "--trace-regions", trace}));
    ASSERT_EQ(paged.exit_code, 0);
    EXPECT_EQ(paged.out, resident.out) << policy;
    const auto summary = test::run_synapse({"trace", trace});
    ASSERT_EQ(summary.exit_code, 0);
    EXPECT_NE(summary.out.find("paging: "), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("expert cache hit rate"), std::string::npos) << summary.out;
  }
}

TEST(MemoryCli, BudgetThatCannotHoldTheSessionExitsThreeNamingTheCategory) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const auto kv = test::run_synapse(run_args(model, {"--mem-budget", "64K"}), true);
  EXPECT_EQ(kv.exit_code, 3);
  EXPECT_NE(kv.out.find("InsufficientMemory"), std::string::npos) << kv.out;
  EXPECT_NE(kv.out.find("[kv]"), std::string::npos) << kv.out;
  // KV for the 15 positions the run reaches and scratch for a 3-token step
  // fit in 10%, the largest region's weights do not.
  const auto weights = test::run_synapse(run_args(model, {"--mem-budget", "10%"}), true);
  EXPECT_EQ(weights.exit_code, 3);
  EXPECT_NE(weights.out.find("[weights]"), std::string::npos) << weights.out;
}

TEST(MemoryCli, BudgetOrPolicyThatDoesNotParseIsAUsageError) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  EXPECT_EQ(test::run_synapse(run_args(model, {"--mem-budget", "lots"})).exit_code, 2);
  EXPECT_EQ(test::run_synapse(run_args(model, {"--mem-budget", "60%", "--cache-policy", "fifo"})).exit_code, 2);
}

TEST(MemoryCli, KvCacheTypesRunAndOthersAreUsageErrors) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "qwen2", "q8_0");
  const auto f32 = test::run_synapse(run_args(model, {"--cache-type-k", "f32", "--cache-type-v", "f32"}));
  ASSERT_EQ(f32.exit_code, 0) << f32.out;
  for (const char* type : {"f16", "q8_0"}) {
    const auto run = test::run_synapse(run_args(model, {"--cache-type-k", type, "--cache-type-v", type}));
    ASSERT_EQ(run.exit_code, 0) << type << run.out;
    EXPECT_EQ(test::parse_ids(test::last_line(run.out)).size(), 12u) << type;
  }
  for (const char* flag : {"--cache-type-k", "--cache-type-v"})
    for (const char* bad : {"q4_0", "F16", "bf16", ""})
      EXPECT_EQ(test::run_synapse(run_args(model, {flag, bad})).exit_code, 2) << flag << " " << bad;
}

}  // namespace
}  // namespace synapse
