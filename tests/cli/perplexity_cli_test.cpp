// synapse perplexity against llama.cpp (synapse-peer perplexity, the same
// protocol on llama.cpp's logits and tokenizer): the same estimate within
// 0.5%, the same mean KL divergence within 5%; and its errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "support/command_runner.h"
#include "support/story_text.h"
#include "support/temp_dir.h"

namespace synapse::test {
namespace {

#define SKIP_UNLESS_STORIES(file)                                                                              \
  if (!std::filesystem::exists(shared_data("gguf/" file)))                                                     \
  GTEST_SKIP() << "shared test data " << shared_data("gguf/" file) << " is absent (needs shared/data next to " \
               << "the source tree)"

std::string stories(const std::string& encoding) {
  return shared_data("gguf/stories260K-" + encoding + ".gguf").string();
}

// The first number after `label` in `out`; NaN when absent.
double number_after(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(out.c_str() + at + label.size(), nullptr);
}

// `perplexity MODEL ARGS...` on synapse (which takes the model as -m FILE)
// or on the peer.
CommandResult perplexity(bool peer, const std::string& model, std::vector<std::string> args) {
  args.insert(args.begin(), model);
  if (!peer) args.insert(args.begin(), "-m");
  args.insert(args.begin(), "perplexity");
  return peer ? run_peer(args) : run_synapse(args);
}

class PerplexityCli : public ::testing::Test {
 protected:
  void SetUp() override {
    text_ = dir_.file("story.txt");
    std::ofstream(text_) << story_text(24000);
  }
  TempDir dir_;
  std::string text_;
};

class PerplexityCliStories : public PerplexityCli, public ::testing::WithParamInterface<const char*> {};

TEST_P(PerplexityCliStories, EstimateIsLlamaCppsWithinHalfAPercent) {
  SYNAPSE_SKIP_UNLESS_PEER();
  SKIP_UNLESS_STORIES("stories260K-f32.gguf");
  const std::vector<std::string> args = {"-f", text_, "-c", "128", "-t", "1"};
  const CommandResult ours = perplexity(false, stories(GetParam()), args);
  const CommandResult peer = perplexity(true, stories(GetParam()), args);
  ASSERT_EQ(ours.exit_code, 0) << ours.out;
  ASSERT_EQ(peer.exit_code, 0) << peer.out;
  const double ppl = number_after(ours.out, "Final estimate: PPL = ");
  const double peer_ppl = number_after(peer.out, "Final estimate: PPL = ");
  ASSERT_GT(ppl, 1.0) << ours.out;
  EXPECT_NEAR(ppl / peer_ppl, 1.0, 0.005) << "synapse " << ppl << ", llama.cpp " << peer_ppl;
  // The running estimate per chunk, as llama-perplexity prints it.
  EXPECT_TRUE(std::regex_search(ours.out, std::regex(R"(^\[1\][0-9.]+,\[2\][0-9.]+,)")));
}

INSTANTIATE_TEST_SUITE_P(Encodings, PerplexityCliStories, ::testing::Values("f32", "q8_0", "q4_0"));

TEST_F(PerplexityCli, KlDivergenceOfQ4_0FromF32IsLlamaCppsWithinFivePercent) {
  SYNAPSE_SKIP_UNLESS_PEER();
  SKIP_UNLESS_STORIES("stories260K-q4_0.gguf");
  const auto mean_kld = [&](bool peer) {
    const std::string base = dir_.file(peer ? "peer.kld" : "ours.kld");
    const CommandResult saved =
        perplexity(peer, stories("f32"), {"-f", text_, "-c", "128", "-t", "1", "--kl-divergence-base", base});
    EXPECT_EQ(saved.exit_code, 0) << saved.out;
    const CommandResult compared =
        perplexity(peer, stories("q4_0"), {"-t", "1", "--kl-divergence-base", base, "--kl-divergence"});
    EXPECT_EQ(compared.exit_code, 0) << compared.out;
    EXPECT_NE(compared.out.find("Same top p:"), std::string::npos) << compared.out;
    return number_after(compared.out, "Mean    KLD:");
  };
  const double ours = mean_kld(false), peer = mean_kld(true);
  ASSERT_GT(ours, 0.0);
  EXPECT_NEAR(ours / peer, 1.0, 0.05) << "synapse " << ours << ", llama.cpp " << peer;
}

TEST_F(PerplexityCli, ATextTooShortIsRefusedAndWritesNoReference) {
  SKIP_UNLESS_STORIES("stories260K-f32.gguf");
  const std::string base = dir_.file("ref.kld");
  const CommandResult r = run_synapse(
      {"perplexity", "-m", stories("f32"), "-f", text_, "-c", "65536", "--kl-divergence-base", base}, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("needs at least 131072"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(base));
  EXPECT_FALSE(std::filesystem::exists(base + ".part"));
}

TEST_F(PerplexityCli, ContradictoryFlagsAreUsageErrors) {
  SKIP_UNLESS_STORIES("stories260K-f32.gguf");
  EXPECT_EQ(run_synapse({"perplexity", "-m", stories("f32"), "--kl-divergence"}, true).exit_code, 2);
  EXPECT_EQ(run_synapse({"perplexity", "-m", stories("f32")}, true).exit_code, 2);
  const std::string base = dir_.file("ref.kld");
  std::ofstream(base) << "not a reference";
  EXPECT_EQ(run_synapse({"perplexity", "-m", stories("f32"), "-f", text_, "--kl-divergence-base", base,
                         "--kl-divergence"},
                        true)
                .exit_code,
            2);
}

TEST_F(PerplexityCli, ADamagedReferenceIsAnErrorNamingTheFile) {
  SKIP_UNLESS_STORIES("stories260K-f32.gguf");
  const std::string base = dir_.file("ref.kld");
  std::ofstream(base) << "SYNKLD01 but then nothing sensible";
  const CommandResult r =
      run_synapse({"perplexity", "-m", stories("f32"), "--kl-divergence-base", base, "--kl-divergence"}, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(base), std::string::npos) << r.out;
}

}  // namespace
}  // namespace synapse::test
