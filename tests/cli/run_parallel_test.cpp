// synapse run -np P: P continuations decoded in batched steps, each the
// same as a run of its own (greedy, and sampled with seed + i).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

class RunParallel : public ::testing::Test {
 protected:

  test::CommandResult run(std::vector<std::string> flags, bool with_stderr = false) {
    std::vector<std::string> args{"run", "-m", model_, "--tokens", "1 2 3 2 3", "-n", "10", "--ignore-eos", "--ids"};
    args.insert(args.end(), flags.begin(), flags.end());
    return test::run_synapse(args, with_stderr);
  }
  // The ids line of a plain run.
  std::string plain_ids(std::vector<std::string> flags) {
    const test::CommandResult r = run(flags);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return test::last_line(r.out);
  }
  test::TempDir dir_;
  std::string model_ = test::write_tiny_model(dir_, "qwen2");
};

// The line "[sequence i] IDS" of a parallel run's output, IDS only.
std::string sequence_line(const std::string& out, int i) {
  const std::string tag = "[sequence " + std::to_string(i) + "] ";
  const size_t at = out.find(tag);
  if (at == std::string::npos) return "(no " + tag + ")";
  const size_t begin = at + tag.size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

TEST_F(RunParallel, EveryContinuationIsTheRunOfItsOwn) {
  const std::string greedy = plain_ids({"--temp", "0"});
  const test::CommandResult together = run({"--temp", "0", "-np", "4"});
  ASSERT_EQ(together.exit_code, 0) << together.out;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(sequence_line(together.out, i), greedy) << together.out;

  // Sampled: continuation i draws as a plain run seeded seed + i.
  const test::CommandResult sampled = run({"--temp", "0.9", "--seed", "7", "--parallel", "3"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(sequence_line(sampled.out, i), plain_ids({"--temp", "0.9", "--seed", std::to_string(7 + i)})) << i;
}

TEST_F(RunParallel, ReportsTheAggregateRateAndRefusesWhatItCannotCombine) {
  const test::CommandResult r = run({"--temp", "0", "-np", "2"}, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("2 sequences"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tok/s"), std::string::npos) << r.out;
  EXPECT_EQ(run({"-np", "2", "--lookup-ngram", "2"}, true).exit_code, 2);
  EXPECT_EQ(run({"-np", "0"}, true).exit_code, 2);
}

}  // namespace
}  // namespace synapse
