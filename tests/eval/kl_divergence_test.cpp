// KL divergence of a run against reference log-probabilities, token by
// token and over a whole reference file.
#include "eval/kl_divergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "encoding/fp16.h"
#include "eval/kl_base_file.h"
#include "eval/kl_report.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse::eval {
namespace {

std::vector<uint16_t> fp16_log_probs(const std::vector<double>& p) {
  std::vector<uint16_t> out;
  for (double v : p) out.push_back(fp32_to_fp16(static_cast<float>(std::log(v))));
  return out;
}

TEST(KlDivergence, IdenticalDistributionsDivergeByNothing) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  const TokenComparison c = compare_row(logits, fp16_log_probs({0.5, 0.3, 0.2}), 1);
  EXPECT_NEAR(c.kld, 0.0, 1e-3);
  EXPECT_TRUE(c.same_top);
  EXPECT_NEAR(c.nll, -std::log(0.3), 1e-6);
  EXPECT_NEAR(c.nll_base, -std::log(0.3), 1e-3);
  EXPECT_NEAR(c.p_diff, 0.0, 1e-3);
}

TEST(KlDivergence, ARowGivesTheTextbookDivergence) {
  // Base (0.5, 0.5), run (0.9, 0.1) as unnormalized logits (shifted by 7):
  // KL = 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1).
  const std::vector<float> logits = {std::log(0.9f) + 7, std::log(0.1f) + 7};
  const TokenComparison c = compare_row(logits, fp16_log_probs({0.5, 0.5}), 1);
  EXPECT_NEAR(c.kld, 0.5 * std::log(0.5 / 0.9) + 0.5 * std::log(0.5 / 0.1), 1e-3);
  EXPECT_NEAR(c.p_diff, 0.1 - 0.5, 1e-3);
  EXPECT_TRUE(c.same_top);  // both put token 0 first (the base's tie goes to the first)
  const TokenComparison flipped = compare_row(std::vector<float>{logits[1], logits[0]}, fp16_log_probs({0.6, 0.4}), 0);
  EXPECT_FALSE(flipped.same_top);
}

// Scores tokens with the same row everywhere: p = (0.7, 0.2, 0.1).
class FixedEngine : public ChunkEvaluator {
 public:
  int64_t vocab() const override { return 3; }
  void eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) override {
    for (size_t i = 0; i < rows.size(); i += 3) {
      rows[i] = std::log(0.7f), rows[i + 1] = std::log(0.2f), rows[i + 2] = std::log(0.1f);
    }
  }
};

TEST(KlDivergence, ARunAgainstItsOwnReferenceDivergesByNothing) {
  test::TempDir dir;
  // 16 chunks: 112 scored tokens, enough for the closing statistics.
  const std::vector<int32_t> tokens(256, 1);
  const ChunkLayout layout = chunk_layout(256, 16, -1);
  FixedEngine engine;
  {
    KlBaseWriter writer(dir.file("base.kld"), {16, 3, 16}, tokens);
    const NllSums nll = perplexity(engine, tokens, layout, std::nullopt, nullptr, &writer);
    writer.commit();
    EXPECT_NEAR(nll.ppl(), 5.0, 1e-5);  // every scored token has p = 0.2
  }
  const KlBaseReader base(dir.file("base.kld"));
  int chunks_seen = 0;
  const KlResult result =
      kl_divergence(engine, base, std::nullopt, [&](int64_t, int64_t, double, const KlSums&) { ++chunks_seen; });
  EXPECT_EQ(chunks_seen, 16);
  EXPECT_EQ(result.sums.count(), 16 * layout.scored());
  EXPECT_NEAR(result.sums.kld.mean(), 0.0, 1e-3);
  EXPECT_EQ(result.sums.same_top, result.sums.count());
  EXPECT_NEAR(result.sums.nll_base.ppl(), 5.0, 5e-3);
  EXPECT_NE(kl_summary(result).find("Mean    KLD:"), std::string::npos);
}

class OtherVocabularyEngine : public FixedEngine {
 public:
  int64_t vocab() const override { return 4; }
};

TEST(KlDivergence, AReferenceOfAnotherVocabularyIsRefused) {
  test::TempDir dir;
  const std::vector<int32_t> tokens(32, 1);
  FixedEngine engine;
  KlBaseWriter writer(dir.file("base.kld"), {16, 3, 2}, tokens);
  perplexity(engine, tokens, chunk_layout(32, 16, -1), std::nullopt, nullptr, &writer);
  writer.commit();
  OtherVocabularyEngine other;
  EXPECT_THROW(kl_divergence(other, KlBaseReader(dir.file("base.kld")), std::nullopt, nullptr), Error);
}

}  // namespace
}  // namespace synapse::eval
