// synapse-bench-run end to end: its exit codes, and a two-round run of both
// engines on a tiny synthetic model (skipped without the llama.cpp peer).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::test {
namespace {

CommandResult run_bench_run(const std::vector<std::string>& args) {
  return run_program(SYNAPSE_BENCH_RUN_PATH, args, /*with_stderr=*/true);
}

TEST(BenchRunCli, BadPlanExitsTwoNamingTheField) {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  std::ofstream(plan) << R"({"rounds": 10, "rows": [{"model": ")" << dir.file("absent.gguf") << R"(", "tg": 8}]})";
  const CommandResult r = run_bench_run({plan});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("rows[0].model: no such file"), std::string::npos) << r.out;
}

TEST(BenchRunCli, PlanFileAndRowFlagsTogetherExitTwo) {
  TempDir dir;
  const std::string model = write_tiny_model(dir);
  const CommandResult r = run_bench_run({dir.file("plan.json"), "-m", model});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("not both"), std::string::npos) << r.out;
}

TEST(BenchRunCli, FailingRunExitsOneNamingTheCommand) {
  TempDir dir;
  const std::string model = write_tiny_model(dir);
  const CommandResult r = run_bench_run(
      {"-m", model, "-p", "16", "-n", "8", "-k", "2", "-s", "16M", "--wrap", "false", "-o", dir.file("out")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("synapse failed in round 1: false "), std::string::npos) << r.out;
}

TEST(BenchRunCli, TwoRoundsOfATinyModelGiveARowPerTest) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string model = write_tiny_model(dir);
  const std::string out = dir.file("out");
  const CommandResult r =
      run_bench_run({"-m", model, "-p", "16", "-n", "8", "-k", "2", "-s", "16M", "--seed", "3", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| tiny.gguf | pp16 | 1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| tiny.gguf | tg8 | 1 |"), std::string::npos) << r.out;

  const nlohmann::json rounds = nlohmann::json::parse(std::ifstream(out + "/rounds.json"));
  EXPECT_FALSE(rounds["host"]["cpu_model"].get<std::string>().empty());
  EXPECT_GT(rounds["host"]["membw"][0]["before_gbps"].get<double>(), 0);
  ASSERT_EQ(rounds["runs"].size(), 4u);
  // Round 1 runs synapse first, round 2 llama.cpp.
  EXPECT_EQ(rounds["runs"][0]["engine"], "synapse");
  EXPECT_EQ(rounds["runs"][2]["engine"], "llama.cpp");
  ASSERT_EQ(rounds["rows"].size(), 2u);
  for (const auto& row : rounds["rows"]) {
    EXPECT_EQ(row["ratios"].size(), 2u);
    EXPECT_TRUE(row["ci95"].is_array());
    EXPECT_GT(row["decode_weight_bytes"].get<uint64_t>() + (row["test"] == "pp16" ? 1u : 0u), 0u);
  }
  std::ifstream summary(out + "/summary.md");
  EXPECT_TRUE(summary.good());
}

}  // namespace
}  // namespace synapse::test
