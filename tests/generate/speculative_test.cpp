// Speculative decoding: whatever the drafter proposes, the output is the
// target's own greedy output, and rejected drafts leave no state behind.
#include "generate/speculative.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "generate/draft_model.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "support/command_runner.h"
#include "support/greedy_params.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse {
namespace {

constexpr int32_t kGenerate = 40;
const std::vector<int32_t> kPrompt = {1, 17, 300, 42, 99, 17, 300, 42, 99, 5};

exec::SessionOptions target_options(int64_t logits_rows = 1) {
  exec::SessionOptions options;
  options.kernels = exec::cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.logits_rows = logits_rows;
  return options;
}

GenerationOptions generation(int32_t n = kGenerate) {
  GenerationOptions gen;
  gen.n_predict = n;
  return gen;
}

// Proposes the target's own continuation (known in advance) with one token
// replaced at a chosen draft position, so every pass rejects there.
class ScriptedDrafter : public Drafter {
 public:
  ScriptedDrafter(std::vector<int32_t> truth, size_t prompt, int wrong_at)
      : truth_(std::move(truth)), prompt_(prompt), wrong_at_(wrong_at) {}
  std::vector<int32_t> draft(std::span<const int32_t> context, int max) override {
    std::vector<int32_t> out;
    for (size_t i = context.size() - prompt_; i < truth_.size() && static_cast<int>(out.size()) < max; ++i)
      out.push_back(truth_[i]);
    if (wrong_at_ >= 0 && wrong_at_ < static_cast<int>(out.size()))
      out[static_cast<size_t>(wrong_at_)] = (out[static_cast<size_t>(wrong_at_)] + 1) % 64;
    return out;
  }

 private:
  std::vector<int32_t> truth_;
  size_t prompt_;
  int wrong_at_;
};

class SpeculativeTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SynthOptions opts;
    opts.arch = GetParam();
    opts.preset = "tiny";
    opts.type = "q8_0";
    opts.seed = 3;
    synth_model(opts, dir_.file("target.gguf"));
    opts.n_layer = 1;
    synth_model(opts, dir_.file("draft.gguf"));
    target_ = std::make_unique<Model>(load_model(dir_.file("target.gguf")));
    draft_ = std::make_unique<Model>(load_model(dir_.file("draft.gguf")));
  }

  std::vector<int32_t> plain(int32_t n = kGenerate) {
    exec::Session session(*target_, target_options());
    Sampler sampler(test::greedy(), static_cast<int32_t>(target_->info.n_vocab));
    return generate(session, sampler, kPrompt, generation(n));
  }

  std::vector<int32_t> speculative(Drafter& drafter, int draft_max, SpeculativeStats& stats,
                                   int32_t n = kGenerate) {
    exec::Session session(*target_, target_options(draft_max + 1));
    Sampler sampler(test::greedy(), static_cast<int32_t>(target_->info.n_vocab));
    SpeculativeOptions spec;
    spec.draft_max = draft_max;
    return generate_speculative(session, sampler, kPrompt, generation(n), drafter, spec, stats);
  }

  test::TempDir dir_;
  std::unique_ptr<Model> target_, draft_;
};

TEST_P(SpeculativeTest, DraftModelGivesTheTargetsGreedyOutputForAnyDraftMax) {
  const std::vector<int32_t> expected = plain();
  for (int draft_max : {1, 4, 16}) {
    ModelDrafter drafter(*draft_, target_options());
    SpeculativeStats stats;
    EXPECT_EQ(speculative(drafter, draft_max, stats), expected) << "draft-max " << draft_max;
    EXPECT_GT(stats.drafted, 0);
  }
}

TEST_P(SpeculativeTest, PromptLookupGivesTheTargetsGreedyOutput) {
  const std::vector<int32_t> expected = plain();
  for (int draft_max : {1, 4, 16}) {
    NgramDrafter drafter(3);
    SpeculativeStats stats;
    EXPECT_EQ(speculative(drafter, draft_max, stats), expected) << "draft-max " << draft_max;
  }
}

// A rejection at the first, a middle and the last drafted token of every
// pass: the KV rows of rejected drafts must not leak into later passes.
TEST_P(SpeculativeTest, RejectionAtAnyDraftPositionLeavesTheOutputUnchanged) {
  const std::vector<int32_t> expected = plain();
  constexpr int kDraftMax = 5;
  for (int wrong_at : {0, 2, kDraftMax - 1, -1}) {
    ScriptedDrafter drafter(expected, kPrompt.size(), wrong_at);
    SpeculativeStats stats;
    EXPECT_EQ(speculative(drafter, kDraftMax, stats), expected) << "wrong at " << wrong_at;
    if (wrong_at < 0) {
      EXPECT_EQ(stats.accepted, stats.drafted);
      EXPECT_LT(stats.target_passes, kGenerate / 2) << "accepted drafts save target passes";
    } else if (wrong_at == 0) {
      EXPECT_EQ(stats.accepted, 0);
    }
  }
}

// A pass the target refuses (here a drafted id outside the vocabulary) ends
// the run with the error, and the committed sequence as it was: no tokens
// of the pass and no branch left open.
TEST_P(SpeculativeTest, ARefusedTargetPassLeavesTheSequenceAsItWas) {
  class OutOfVocabulary : public Drafter {
   public:
    explicit OutOfVocabulary(int32_t vocab) : vocab_(vocab) {}
    std::vector<int32_t> draft(std::span<const int32_t>, int) override { return {vocab_ + 7}; }

   private:
    int32_t vocab_;
  };
  OutOfVocabulary drafter(static_cast<int32_t>(target_->info.n_vocab));
  exec::Session session(*target_, target_options(5));
  Sampler sampler(test::greedy(), static_cast<int32_t>(target_->info.n_vocab));
  SpeculativeOptions spec;
  spec.draft_max = 4;
  SpeculativeStats stats;
  EXPECT_THROW(generate_speculative(session, sampler, kPrompt, generation(), drafter, spec, stats), Error);
  EXPECT_EQ(session.position(), static_cast<int64_t>(kPrompt.size()));
  EXPECT_NO_THROW(session.begin_branch()) << "the refused pass left its branch open";
}

TEST_P(SpeculativeTest, StopsAtNPredictAndAtTheContextsEnd) {
  ModelDrafter drafter(*draft_, target_options());
  SpeculativeStats stats;
  EXPECT_EQ(speculative(drafter, 16, stats, 7), plain(7));
  EXPECT_TRUE(speculative(drafter, 16, stats, 0).empty());
}

INSTANTIATE_TEST_SUITE_P(Architectures, SpeculativeTest, testing::Values("qwen2", "olmoe"));

// Real weights: stories260K in F32 drafted by its own Q4_0 file.
TEST(SpeculativeStories, Q4_0DraftGivesTheF32TargetsGreedyOutput) {
  const std::filesystem::path target_path = test::shared_data("gguf/stories260K-f32.gguf");
  const std::filesystem::path draft_path = test::shared_data("gguf/stories260K-q4_0.gguf");
  if (!std::filesystem::exists(target_path) || !std::filesystem::exists(draft_path))
    GTEST_SKIP() << "shared test data " << target_path << " or " << draft_path << " is absent";
  const Model target = load_model(target_path.string());
  const Model draft = load_model(draft_path.string());
  const std::vector<int32_t> prompt = {1, 403, 261, 378};  // BOS and a few story tokens
  exec::Session plain_session(target, target_options());
  Sampler plain_sampler(test::greedy(), static_cast<int32_t>(target.info.n_vocab));
  const std::vector<int32_t> expected = generate(plain_session, plain_sampler, prompt, generation(64));
  for (int draft_max : {1, 4, 16}) {
    exec::Session session(target, target_options(draft_max + 1));
    Sampler sampler(test::greedy(), static_cast<int32_t>(target.info.n_vocab));
    ModelDrafter drafter(draft, target_options());
    SpeculativeStats stats;
    SpeculativeOptions spec;
    spec.draft_max = draft_max;
    EXPECT_EQ(generate_speculative(session, sampler, prompt, generation(64), drafter, spec, stats), expected)
        << "draft-max " << draft_max;
    // A quantized copy mostly agrees with its target: fewer passes than tokens.
    EXPECT_LT(stats.target_passes, 48) << "draft-max " << draft_max << ": " << stats.accepted << " of "
                                       << stats.drafted << " drafts accepted";
  }
}

TEST(NgramDrafter, DraftsWhatFollowedTheLongestEarlierMatch) {
  NgramDrafter drafter(3);
  // "7 8 9" occurred before, followed by 1 2; "8 9" alone is followed by 4 too.
  const std::vector<int32_t> context = {8, 9, 4, 7, 8, 9, 1, 2, 5, 7, 8, 9};
  EXPECT_EQ(drafter.draft(context, 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(drafter.draft(context, 1), (std::vector<int32_t>{1}));
  EXPECT_TRUE(drafter.draft(std::vector<int32_t>{1, 2, 3}, 4).empty());
  // A run of one token: the earliest occurrence supplies the most.
  EXPECT_EQ(drafter.draft(std::vector<int32_t>{6, 6, 6, 6, 6}, 3), (std::vector<int32_t>{6, 6}));
}

TEST(Speculative, RefusesBadDraftCounts) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2"));
  exec::Session session(model, target_options(5));
  NgramDrafter drafter(2);
  SpeculativeStats stats;
  Sampler sampler(test::greedy(), static_cast<int32_t>(model.info.n_vocab));
  EXPECT_THROW(generate_speculative(session, sampler, kPrompt, generation(), drafter, {8, 0}, stats), Error)
      << "the session plans 5 logits rows, not 9";
  EXPECT_THROW(generate_speculative(session, sampler, kPrompt, generation(), drafter, {2, 3}, stats), Error);
  EXPECT_THROW(generate_speculative(session, sampler, kPrompt, generation(), drafter, {0, 0}, stats), Error);
}

// Chi-square homogeneity of two samples of equal size, categories with
// fewer than 10 observations in both pooled; below the critical value at
// p = 0.001 (Wilson-Hilferty), so a correct rule fails about once in 1000.
void expect_same_distribution(const std::map<int32_t, int>& a, const std::map<int32_t, int>& b, const char* what) {
  std::map<int32_t, int> keys;
  for (const auto& [k, n] : a) keys[k] += n;
  for (const auto& [k, n] : b) keys[k] += n;
  double statistic = 0.0, pooled_a = 0.0, pooled_b = 0.0;
  int categories = 0;
  for (const auto& [k, total] : keys) {
    const double x = a.count(k) ? a.at(k) : 0, y = b.count(k) ? b.at(k) : 0;
    if (total < 10) {
      pooled_a += x;
      pooled_b += y;
      continue;
    }
    statistic += (x - y) * (x - y) / (x + y);
    ++categories;
  }
  if (pooled_a + pooled_b > 0) {
    statistic += (pooled_a - pooled_b) * (pooled_a - pooled_b) / (pooled_a + pooled_b);
    ++categories;
  }
  ASSERT_GE(categories, 2) << what << ": too few outcomes to compare";
  const double dof = categories - 1, z = 3.09;
  const double critical = dof * std::pow(1.0 - 2.0 / (9.0 * dof) + z * std::sqrt(2.0 / (9.0 * dof)), 3.0);
  EXPECT_LT(statistic, critical) << what << ": chi-square over " << categories << " outcomes";
}

// Sampled speculation keeps the target's distribution: the third and
// fourth tokens over many seeds, plain against drafted (a sampled draft
// model, and certain drafts: the greedy continuation, often but not always
// what is drawn).
TEST_P(SpeculativeTest, SampledOutputHasTheTargetsDistribution) {
  constexpr int kRuns = 500;
  constexpr int32_t kTokens = 4;
  SamplingParams sampled;
  sampled.temp = 1.0f;
  sampled.top_k = 6;
  const auto vocab = static_cast<int32_t>(target_->info.n_vocab);
  exec::Session plain_session(*target_, target_options());
  exec::Session spec_session(*target_, target_options(4));
  ModelDrafter model_drafter(*draft_, target_options(), sampled);
  ScriptedDrafter greedy_drafter(plain(), kPrompt.size(), -1);
  for (Drafter* drafter : std::initializer_list<Drafter*>{&model_drafter, &greedy_drafter}) {
    std::map<int32_t, int> plain_counts[2], spec_counts[2];
    SpeculativeStats stats;
    for (uint32_t seed = 1; seed <= kRuns; ++seed) {
      sampled.seed = seed;
      plain_session.reset();
      Sampler plain_sampler(sampled, vocab);
      const std::vector<int32_t> a = generate(plain_session, plain_sampler, kPrompt, generation(kTokens));
      sampled.seed = seed + 100000;
      spec_session.reset();
      Sampler spec_sampler(sampled, vocab);
      const std::vector<int32_t> b =
          generate_speculative(spec_session, spec_sampler, kPrompt, generation(kTokens), *drafter, {3, 0}, stats);
      ASSERT_EQ(a.size(), static_cast<size_t>(kTokens));
      ASSERT_EQ(b.size(), static_cast<size_t>(kTokens));
      for (int i = 0; i < 2; ++i) {
        ++plain_counts[i][a[2 + i]];
        ++spec_counts[i][b[2 + i]];
      }
    }
    EXPECT_GT(stats.drafted, 0);
    expect_same_distribution(plain_counts[0], spec_counts[0], "third token");
    expect_same_distribution(plain_counts[1], spec_counts[1], "fourth token");
  }
}

TEST(DraftVocabulary, AMismatchNamesTheFirstDifferingToken) {
  Vocabulary target, draft;
  target.tokens = {"a", "b", "c"};
  draft.tokens = {"a", "x", "c"};
  EXPECT_NO_THROW(require_same_vocabulary(target, target));
  try {
    require_same_vocabulary(target, draft);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token 1 is 'b' in the target and 'x' in the draft"), std::string::npos)
        << e.what();
  }
  draft.tokens = {"a", "b"};
  EXPECT_THROW(require_same_vocabulary(target, draft), Error);
}

}  // namespace
}  // namespace synapse
