// synapse run: bad requests fail before any compute with one clear line.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

class RunErrors : public ::testing::Test {
 protected:
  test::CommandResult run(const std::vector<std::string>& flags) {
    std::vector<std::string> args{"run", "-m", model_};
    for (const auto& f : flags) args.push_back(f);
    return test::run_synapse(args, true);
  }
  test::TempDir dir_;
  std::string model_ = test::write_tiny_model(dir_);
};

TEST_F(RunErrors, TokenOutsideTheVocabularyIsAnError) {
  auto r = run({"--tokens", "1 512", "-n", "4"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("InvalidValue"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("512"), std::string::npos) << r.out;
}

TEST_F(RunErrors, PromptLongerThanTheContextIsAnError) {
  auto r = run({"--tokens", "1 2 3 4 5 6 7 8", "-c", "4", "-n", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("context"), std::string::npos) << r.out;
}

TEST_F(RunErrors, BadTokenTextIsAUsageError) {
  EXPECT_EQ(run({"--tokens", "1 x", "-n", "1"}).exit_code, 2);
  EXPECT_EQ(run({"--tokens", "", "-n", "1"}).exit_code, 0);  // empty: BOS alone
  EXPECT_EQ(run({"--tokens", "1", "--no-such-flag"}).exit_code, 2);
}

TEST_F(RunErrors, IdsFlagPrintsExactlyTheGeneratedIds) {
  // stdout alone: the timings follow on stderr.
  auto r = test::run_synapse({"run", "-m", model_, "--tokens", "1 2 3", "-n", "5", "--temp", "0", "--ignore-eos",
                              "--ids"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto ids = test::parse_ids(test::last_line(r.out));
  EXPECT_EQ(ids.size(), 5u) << r.out;
  for (int32_t id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 512);
  }
}

// A text prompt needs the file's tokenizer; when the file is broken, what
// is wrong with it is the error, not the missing tokenizer.
class RunPromptOnBrokenFile : public ::testing::Test {
 protected:
  test::CommandResult run_prompt(const std::string& path) {
    return test::run_synapse({"run", "-m", path, "-p", "hello", "-n", "1"}, true);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.file(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  test::TempDir dir_;
};

TEST_F(RunPromptOnBrokenFile, BytesThatAreNoModelAreReportedAsSuch) {
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  const auto r = run_prompt(write("noise.bin", noise));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("llama2.c header"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("needs a tokenizer"), std::string::npos) << r.out;
}

TEST_F(RunPromptOnBrokenFile, ACutGgufIsReportedWithTheFilesOwnError) {
  std::ifstream in(test::write_tiny_model(dir_), std::ios::binary);
  const std::string whole{std::istreambuf_iterator<char>(in), {}};
  // Cut inside the header, the vocabulary and the tensor data.
  for (size_t keep : {size_t{40}, whole.size() / 64, whole.size() / 16, whole.size() / 2}) {
    const std::string path = write("cut.gguf", whole.substr(0, keep));
    const auto r = run_prompt(path);
    EXPECT_EQ(r.exit_code, 1) << keep << ": " << r.out;
    EXPECT_NE(r.out.find("in " + path), std::string::npos) << keep << ": " << r.out;
    EXPECT_EQ(r.out.find("needs a tokenizer"), std::string::npos) << keep << ": " << r.out;
  }
}

TEST(RunMissingModel, MissingModelFileIsAUsageError) {
  EXPECT_EQ(test::run_synapse({"run", "-m", "/nonexistent.gguf", "--tokens", "1"}, true).exit_code, 2);
}

}  // namespace
}  // namespace synapse
