// synapse quantize on the command line: exit codes and no output left
// behind for bad input, and a quantized stories260K that runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/command_runner.h"
#include "support/temp_dir.h"

namespace synapse::test {
namespace {

class QuantizeCli : public ::testing::Test {
 protected:
  // A tiny random model to quantize.
  void SetUp() override {
    ASSERT_EQ(run_synapse({"synth", "--preset", "tiny", "--type", "f32", "-o", input_}).exit_code, 0);
  }
  CommandResult quantize(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"quantize"};
    all.insert(all.end(), args.begin(), args.end());
    return run_synapse(all, true);
  }
  void expect_no_output() {
    EXPECT_FALSE(std::filesystem::exists(output_));
    EXPECT_FALSE(std::filesystem::exists(output_ + ".part"));
  }

  TempDir dir_;
  std::string input_ = dir_.file("in.gguf");
  std::string output_ = dir_.file("out.gguf");
};

TEST_F(QuantizeCli, WritesTheFileAndSaysWhat) {
  const CommandResult r = quantize({input_, output_, "Q4_K_M", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("type q4_k_m (llama_ftype 15)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1/"), std::string::npos) << r.out;  // per-tensor progress on stderr
  EXPECT_TRUE(std::filesystem::exists(output_));
}

TEST_F(QuantizeCli, BadFlagsExitTwo) {
  CommandResult r = quantize({input_, output_, "q3_k"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown type 'q3_k'"), std::string::npos) << r.out;
  EXPECT_EQ(quantize({input_, output_}).exit_code, 2);
  EXPECT_EQ(quantize({input_, output_, "q8_0", "-t", "-1"}).exit_code, 2);
  // Tens of thousands of threads exhausted the system's and hung the exit.
  EXPECT_EQ(quantize({input_, output_, "q8_0", "-t", "100000"}).exit_code, 2);
  expect_no_output();
}

TEST_F(QuantizeCli, BadInputExitsOneAndLeavesNothing) {
  CommandResult r = quantize({dir_.file("absent.gguf"), output_, "q8_0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  expect_no_output();

  std::ifstream in(input_, std::ios::binary);
  const std::string whole{std::istreambuf_iterator<char>(in), {}};
  std::ofstream(dir_.file("cut.gguf"), std::ios::binary) << whole.substr(0, whole.size() / 3);
  r = quantize({dir_.file("cut.gguf"), output_, "q8_0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  expect_no_output();

  std::ofstream(dir_.file("text.gguf")) << "not a model\n";
  r = quantize({dir_.file("text.gguf"), output_, "q8_0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  expect_no_output();

  const std::string nowhere = dir_.file("missing/dir/out.gguf");
  r = quantize({input_, nowhere, "q8_0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(nowhere));
}

TEST(QuantizeCliStories, QuantizedStories260KRuns) {
  const std::string f32 = shared_data("gguf/stories260K-f32.gguf").string();
  if (!std::filesystem::exists(f32)) GTEST_SKIP() << "shared test data " << f32 << " is absent";
  TempDir dir;
  const std::string q = dir.file("q4_k_m.gguf");
  ASSERT_EQ(run_synapse({"quantize", f32, q, "q4_k_m"}).exit_code, 0);
  const CommandResult r = run_synapse({"run", "-m", q, "--tokens", "1", "-n", "16", "--temp", "0", "--ids"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(r.out.empty());
}

}  // namespace
}  // namespace synapse::test
