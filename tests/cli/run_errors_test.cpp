// synapse run: bad requests fail before any compute with one clear line.
#include <gtest/gtest.h>
#include <sys/stat.h>

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

// The prompt's ids are checked before anything runs, and the error names
// the prompt, not sampling.
TEST_F(RunErrors, APromptIdOutsideTheVocabularyIsNamedAsThePrompts) {
  auto r = run({"--tokens", "512", "-n", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("prompt token 0 (id 512) is outside the vocabulary of 512"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sampling"), std::string::npos) << r.out;
}

// A run that fails leaves no --dump-logits or --trace-regions file behind
// (nor their .part); one that ends writes both.
TEST_F(RunErrors, AFailedRunLeavesNoLogitsDumpOrTraceFile) {
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--tokens", "1 2 999"},
                                              std::vector<std::string>{"--tokens", "1 2 3 4 5 6 7 8", "-c", "4"}}) {
    std::vector<std::string> flags = bad;
    for (const char* f : {"-n", "2", "--dump-logits", "", "--trace-regions", ""}) flags.push_back(f);
    flags[flags.size() - 3] = dir_.file("bad.f32");
    flags[flags.size() - 1] = dir_.file("bad.jsonl");
    EXPECT_EQ(run(flags).exit_code, 1);
    for (const char* name : {"bad.f32", "bad.jsonl", "bad.f32.part", "bad.jsonl.part"})
      EXPECT_FALSE(std::ifstream(dir_.file(name)).good()) << name << " after " << bad[1];
  }
  const auto good = run({"--tokens", "1 2 3", "-n", "2", "--temp", "0", "--dump-logits", dir_.file("good.f32"),
                         "--trace-regions", dir_.file("good.jsonl")});
  ASSERT_EQ(good.exit_code, 0) << good.out;
  EXPECT_FALSE(test::read_text(dir_.file("good.f32")).empty());
  EXPECT_FALSE(test::read_text(dir_.file("good.jsonl")).empty());
  EXPECT_FALSE(std::ifstream(dir_.file("good.f32.part")).good());
}

// llama.cpp's -1: the penalty looks back over the whole context.
TEST_F(RunErrors, RepeatLastNMinusOneIsTheWholeContext) {
  EXPECT_EQ(run({"--tokens", "1 2 3", "-n", "2", "--repeat-last-n", "-1", "--repeat-penalty", "1.1"}).exit_code, 0);
  EXPECT_EQ(run({"--tokens", "1 2 3", "-n", "2", "--repeat-last-n", "-2"}).exit_code, 2);
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
  EXPECT_NE(r.out.find("neither a GGUF file"), std::string::npos) << r.out;
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

// A device or a pipe given as the model or the tokenizer is refused at
// once: /dev/zero was read without end, a FIFO blocked the open.
TEST_F(RunPromptOnBrokenFile, ADeviceOrAFifoIsNotReadAsAModelOrATokenizer) {
  const std::string fifo = dir_.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& model : {std::string("/dev/zero"), fifo}) {
    const auto r = run_prompt(model);
    EXPECT_EQ(r.exit_code, 1) << model << ": " << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << model << ": " << r.out;
  }
  const std::string tiny = test::write_tiny_model(dir_);
  for (const std::string& tokenizer : {std::string("/dev/zero"), fifo}) {
    const auto r = test::run_synapse({"run", "-m", tiny, "--tokenizer", tokenizer, "-p", "hi", "-n", "1"}, true);
    EXPECT_EQ(r.exit_code, 1) << tokenizer << ": " << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << tokenizer << ": " << r.out;
    const auto t = test::run_synapse({"tokenize", "-m", tokenizer, "hi"}, true);
    EXPECT_NE(t.exit_code, 0) << tokenizer << ": " << t.out;
  }
}

TEST(RunMissingModel, MissingModelFileIsAUsageError) {
  EXPECT_EQ(test::run_synapse({"run", "-m", "/nonexistent.gguf", "--tokens", "1"}, true).exit_code, 2);
}

}  // namespace
}  // namespace synapse
