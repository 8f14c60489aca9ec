// synapse eval on a tiny synthetic model: every task runs end to end and
// reports each sample and the accuracy (random weights answer nothing
// right; the tasks' content is tested in tests/eval); bad requests are
// usage errors.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::test {
namespace {

class EvalCli : public ::testing::TestWithParam<const char*> {
 protected:
  TempDir dir_;
  std::string model_ = write_tiny_model(dir_);
};

TEST_P(EvalCli, TaskRunsEverySampleAndReportsTheAccuracy) {
  const CommandResult r =
      run_synapse({"eval", GetParam(), "-m", model_, "--length", "600", "--samples", "2", "-t", "1", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["task"], GetParam());
  ASSERT_EQ(out["samples"].size(), 2u);
  for (const auto& s : out["samples"]) {
    EXPECT_GT(s["prompt_tokens"].get<int>(), 300);
    EXPECT_LE(s["prompt_tokens"].get<int>(), 600);
    EXPECT_FALSE(s["expected"].empty());
  }
  EXPECT_GE(out["accuracy"].get<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Tasks, EvalCli, ::testing::Values("passkey", "niah", "niah-multikey", "vt"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(EvalCliErrors, UnknownTaskAndTooShortLengthAreUsageErrors) {
  TempDir dir;
  const std::string model = write_tiny_model(dir);
  const CommandResult unknown = run_synapse({"eval", "haystack", "-m", model}, true);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("passkey, niah"), std::string::npos) << unknown.out;
  EXPECT_EQ(run_synapse({"eval", "passkey", "-m", model, "--length", "70"}, true).exit_code, 2);
}

TEST(EvalCliText, PrintsALinePerSampleAndTheAccuracy) {
  TempDir dir;
  const std::string model = write_tiny_model(dir);
  const CommandResult r =
      run_synapse({"eval", "passkey", "-m", model, "--length", "400", "--samples", "2", "--depth", "0.5", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("passkey sample 1/2: depth 0.50"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("passkey sample 2/2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("passkey: accuracy"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace synapse::test
