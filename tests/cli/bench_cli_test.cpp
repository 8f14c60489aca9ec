// synapse bench: both tests run and report llama-bench's fields; bad flags
// are usage errors (exit 2). Timings are only checked to be positive.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

class CliBench : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    path_ = test::write_tiny_model(*dir_);
  }
  static void TearDownTestSuite() { delete dir_; }
  static test::TempDir* dir_;
  static std::string path_;
};
test::TempDir* CliBench::dir_ = nullptr;
std::string CliBench::path_;

TEST_F(CliBench, JsonHasBothTestsWithLlamaBenchFields) {
  const auto r = test::run_synapse({"bench", "-m", path_, "-p", "8", "-n", "4", "-r", "2", "-t", "2", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["n_prompt"], 8);
  EXPECT_EQ(j[0]["n_gen"], 0);
  EXPECT_EQ(j[1]["n_prompt"], 0);
  EXPECT_EQ(j[1]["n_gen"], 4);
  for (const auto& test : j) {
    for (const char* key : {"model_filename", "model_type", "model_size", "model_n_params", "n_threads", "n_prompt",
                            "n_gen", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ts"})
      EXPECT_TRUE(test.contains(key)) << key;
    EXPECT_EQ(test["model_filename"], path_);
    EXPECT_EQ(test["n_threads"], 2);
    EXPECT_GT(test["avg_ts"].get<double>(), 0.0);
    EXPECT_GT(test["avg_ns"].get<double>(), 0.0);
    ASSERT_EQ(test["samples_ts"].size(), 2u);
    for (const auto& ts : test["samples_ts"]) EXPECT_GT(ts.get<double>(), 0.0);
  }
}

TEST_F(CliBench, TableHasARowPerTestAndCommaListsAddTests) {
  const auto r = test::run_synapse({"bench", "-m", path_, "-p", "4,8", "-n", "4", "-r", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" t/s |"), std::string::npos) << r.out;
  for (const char* test : {" pp4 |", " pp8 |", " tg4 |"}) EXPECT_NE(r.out.find(test), std::string::npos) << test;
}

TEST_F(CliBench, JsonLinesAndZeroSkipsATest) {
  const auto r = test::run_synapse({"bench", "-m", path_, "-p", "0", "-n", "2", "-r", "1", "-o", "jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // one line: one object
  EXPECT_EQ(j["n_gen"], 2);
  EXPECT_EQ(j["n_prompt"], 0);
}

TEST_F(CliBench, DepthsRunEveryTestAfterThatManyTokens) {
  const auto r = test::run_synapse({"bench", "-m", path_, "-p", "8", "-n", "4", "-d", "0,32", "-r", "1", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* test : {" pp8 |", " pp8 @ d32 |", " tg4 |", " tg4 @ d32 |"})
    EXPECT_NE(r.out.find(test), std::string::npos) << test << "\n" << r.out;
  const auto lines = test::run_synapse({"bench", "-m", path_, "-p", "0", "-n", "4", "-d", "32", "-r", "1", "-o", "jsonl"});
  ASSERT_EQ(lines.exit_code, 0) << lines.out;
  EXPECT_EQ(nlohmann::json::parse(lines.out)["n_depth"], 32);
}

TEST_F(CliBench, BadFlagsAreUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"bench"},                                    // no model
      {"bench", "-m", path_, "-p", "0", "-n", "0"},  // nothing to run
      {"bench", "-m", path_, "-o", "xml"},
      {"bench", "-m", path_, "-r", "0"},
      {"bench", "-m", path_, "-p", "x"},
      {"bench", "-m", path_, "-t", "0"},
      {"bench", "-m", path_, "--no-such-flag"},
  };
  for (const auto& args : cases) {
    const auto r = test::run_synapse(args, true);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.out;
  }
}

TEST_F(CliBench, MissingModelFileIsAUsageError) {
  EXPECT_EQ(test::run_synapse({"bench", "-m", dir_->file("absent.gguf")}, true).exit_code, 2);
}

}  // namespace
}  // namespace synapse
