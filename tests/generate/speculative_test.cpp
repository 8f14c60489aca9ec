// Speculative decoding: whatever the drafter proposes, the output is the
// target's own greedy output, and rejected drafts leave no state behind.
#include "generate/speculative.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "generate/draft_model.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse {
namespace {

constexpr int32_t kGenerate = 40;
const std::vector<int32_t> kPrompt = {1, 17, 300, 42, 99, 17, 300, 42, 99, 5};

SamplingParams greedy() {
  SamplingParams p;
  p.temp = 0.0f;
  return p;
}

exec::SessionOptions cpu_options(int64_t logits_rows = 1) {
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
    exec::Session session(*target_, cpu_options());
    Sampler sampler(greedy(), static_cast<int32_t>(target_->info.n_vocab));
    return generate(session, sampler, kPrompt, generation(n));
  }

  std::vector<int32_t> speculative(Drafter& drafter, int draft_max, SpeculativeStats& stats,
                                   int32_t n = kGenerate) {
    exec::Session session(*target_, cpu_options(draft_max + 1));
    Sampler sampler(greedy(), static_cast<int32_t>(target_->info.n_vocab));
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
    ModelDrafter drafter(*draft_, cpu_options());
    SpeculativeStats stats;
    EXPECT_EQ(speculative(drafter, draft_max, stats), expected) << "draft-max " << draft_max;
    EXPECT_GT(stats.drafted, 0);
    EXPECT_LT(stats.target_passes, kGenerate - 1) << "drafts accepted save target passes";
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
    } else if (wrong_at == 0) {
      EXPECT_EQ(stats.accepted, 0);
    }
  }
}

TEST_P(SpeculativeTest, StopsAtNPredictAndAtTheContextsEnd) {
  ModelDrafter drafter(*draft_, cpu_options());
  SpeculativeStats stats;
  EXPECT_EQ(speculative(drafter, 16, stats, 7), plain(7));
  EXPECT_TRUE(speculative(drafter, 16, stats, 0).empty());
}

INSTANTIATE_TEST_SUITE_P(Architectures, SpeculativeTest, testing::Values("qwen2", "olmoe"));

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

TEST(Speculative, RefusesSamplingAndBadDraftCounts) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2"));
  exec::Session session(model, cpu_options(5));
  NgramDrafter drafter(2);
  SpeculativeStats stats;
  SamplingParams sampled;
  sampled.temp = 0.8f;
  Sampler sampler(sampled, static_cast<int32_t>(model.info.n_vocab));
  EXPECT_THROW(generate_speculative(session, sampler, kPrompt, generation(), drafter, {4, 0}, stats), Error);
  Sampler greedy_sampler(greedy(), static_cast<int32_t>(model.info.n_vocab));
  EXPECT_THROW(generate_speculative(session, greedy_sampler, kPrompt, generation(), drafter, {8, 0}, stats), Error)
      << "the session plans 5 logits rows, not 9";
  EXPECT_THROW(generate_speculative(session, greedy_sampler, kPrompt, generation(), drafter, {2, 3}, stats), Error);
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
