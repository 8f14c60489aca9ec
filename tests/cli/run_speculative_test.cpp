// synapse run -md / --lookup-ngram: the same ids as a plain greedy run,
// llama.cpp's flag names, the counters on stderr, a clear error for a
// draft of another vocabulary.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synth/synth.h"

namespace synapse {
namespace {

class RunSpeculative : public ::testing::Test {
 protected:
  RunSpeculative() {
    SynthOptions opts;
    opts.arch = "qwen2";
    opts.preset = "tiny";
    opts.type = "q8_0";
    synth_model(opts, target_);
    opts.n_layer = 1;
    synth_model(opts, draft_);
    opts.n_vocab = 300;
    synth_model(opts, other_vocab_);
  }
  // Greedy unless flags set --temp.
  test::CommandResult run(std::vector<std::string> flags, bool with_stderr = false) {
    std::vector<std::string> args{"run", "-m", target_, "--tokens", "1 2 3 2 3", "-n", "12", "--ignore-eos", "--ids"};
    if (std::find(flags.begin(), flags.end(), "--temp") == flags.end()) flags.insert(flags.end(), {"--temp", "0"});
    args.insert(args.end(), flags.begin(), flags.end());
    return test::run_synapse(args, with_stderr);
  }
  test::TempDir dir_;
  std::string target_ = dir_.file("target.gguf"), draft_ = dir_.file("draft.gguf"),
              other_vocab_ = dir_.file("other.gguf");
};

TEST_F(RunSpeculative, DraftModelAndPromptLookupPrintThePlainRunsIds) {
  const test::CommandResult plain = run({});
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"-md", draft_, "--draft-max", "4"}, {"--model-draft", draft_, "--draft-max", "1"},
        {"--lookup-ngram", "2", "--draft-max", "8"}}) {
    const test::CommandResult r = run(flags);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(test::last_line(r.out), test::last_line(plain.out)) << flags[0];
    const test::CommandResult with_stats = run(flags, true);
    EXPECT_NE(with_stats.out.find("speculative:"), std::string::npos) << with_stats.out;
    EXPECT_NE(with_stats.out.find("accepted"), std::string::npos) << with_stats.out;
  }
}

TEST_F(RunSpeculative, ADraftOfAnotherVocabularyIsRefused) {
  const test::CommandResult r = run({"-md", other_vocab_}, true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("vocabulary"), std::string::npos) << r.out;
}

TEST_F(RunSpeculative, SamplingWithDraftsRunsAndBothDraftersAreAnError) {
  EXPECT_EQ(run({"--lookup-ngram", "2", "--temp", "0.7", "--seed", "3"}, true).exit_code, 0);
  EXPECT_EQ(run({"-md", draft_, "--temp", "0.7", "--seed", "3"}, true).exit_code, 0);
  EXPECT_EQ(run({"-md", draft_, "--lookup-ngram", "2"}, true).exit_code, 2);
  EXPECT_EQ(run({"--draft-max", "0", "--lookup-ngram", "2"}, true).exit_code, 2);
}

}  // namespace
}  // namespace synapse
