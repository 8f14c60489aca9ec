// llama.cpp's command lines run as they are: -f reads the prompt from a
// file (less one final newline), -ngl/--n-gpu-layers is taken and ignored
// with a note.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

class LlamaFlags : public ::testing::Test {
 protected:
  // stdout (the generated ids) alone, or with stderr (`with_stderr`).
  test::CommandResult run(const std::vector<std::string>& flags, bool with_stderr = false) {
    std::vector<std::string> args{"run", "-m", model_, "-n", "6", "--temp", "0", "--ignore-eos", "--ids"};
    args.insert(args.end(), flags.begin(), flags.end());
    return test::run_synapse(args, with_stderr);
  }
  test::TempDir dir_;
  std::string model_ = test::write_tiny_model(dir_);
};

TEST_F(LlamaFlags, PromptFileGivesTheTokensOfItsTextLessTheFinalNewline) {
  const std::string path = dir_.file("prompt.txt");
  std::ofstream(path) << "hello world\n";
  const auto from_file = run({"-f", path});
  const auto from_text = run({"-p", "hello world"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.out;
  ASSERT_EQ(from_text.exit_code, 0) << from_text.out;
  EXPECT_EQ(test::last_line(from_file.out), test::last_line(from_text.out));
  EXPECT_NE(test::last_line(from_file.out), test::last_line(run({"-p", "hello world\n"}).out));
}

TEST_F(LlamaFlags, PromptFileWithPOrAMissingFileIsAUsageError) {
  const std::string path = dir_.file("prompt.txt");
  std::ofstream(path) << "hello";
  const auto both = run({"-f", path, "-p", "hello"}, true);
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.out.find("not both"), std::string::npos) << both.out;
  EXPECT_EQ(run({"-f", dir_.file("absent.txt")}).exit_code, 2);
}

TEST_F(LlamaFlags, GpuLayersAreTakenAndIgnoredWithANote) {
  const auto plain = run({"-p", "hello"});
  for (const char* flag : {"-ngl", "--n-gpu-layers"}) {
    const auto r = run({"-p", "hello", flag, "99"});
    ASSERT_EQ(r.exit_code, 0) << flag << ": " << r.out;
    EXPECT_EQ(test::last_line(r.out), test::last_line(plain.out)) << flag;
    const auto noted = run({"-p", "hello", flag, "99"}, true);
    EXPECT_NE(noted.out.find("--n-gpu-layers ignored"), std::string::npos) << noted.out;
  }
}

}  // namespace
}  // namespace synapse
