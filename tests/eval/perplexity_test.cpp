// llama-perplexity's protocol on a fake engine whose probabilities are
// known, so the estimate can be worked out by hand.
#include "eval/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "synapse/error.h"

namespace synapse::eval {
namespace {

// Vocabulary {0, 1}. At an even position the next token is 1 with
// probability 3/4, at an odd one with 1/4. Records what it was given.
class AlternatingEngine : public ChunkEvaluator {
 public:
  int64_t vocab() const override { return 2; }
  void eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) override {
    seen.emplace_back(tokens.begin(), tokens.end());
    firsts.push_back(first);
    const auto n = static_cast<int64_t>(tokens.size());
    ASSERT_EQ(rows.size(), static_cast<size_t>((n - 1 - first) * 2));
    for (int64_t pos = first; pos < n - 1; ++pos) {
      float* row = rows.data() + (pos - first) * 2;
      row[0] = pos % 2 == 0 ? 0.0f : std::log(3.0f);
      row[1] = pos % 2 == 0 ? std::log(3.0f) : 0.0f;
    }
  }
  std::vector<std::vector<int32_t>> seen;
  std::vector<int64_t> firsts;
};

TEST(Perplexity, TwoChunksGiveTheHandComputedEstimate) {
  // Chunks of 6: positions 3 and 4 of each are scored, predicting tokens 4
  // and 5. Chunk 0: p(1 | pos 3) = 1/4, p(0 | pos 4) = 1/4. Chunk 1:
  // p(1 | pos 3) = 1/4, p(1 | pos 4) = 3/4. NLLs ln 4, ln 4, ln 4, ln 4/3:
  // PPL = exp((3 ln 4 + ln 4/3) / 4) = 4 / 3^(1/4).
  const std::vector<int32_t> tokens = {0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1};  // the 13th is past the chunks
  AlternatingEngine engine;
  const ChunkLayout layout = chunk_layout(static_cast<int64_t>(tokens.size()), 6, -1);
  ASSERT_EQ(layout.n_chunks, 2);
  std::vector<double> running;
  const NllSums nll = perplexity(engine, tokens, layout, std::nullopt,
                                 [&](const ChunkDone& done) { running.push_back(done.nll->ppl()); });
  EXPECT_EQ(nll.count, 4);
  EXPECT_NEAR(nll.ppl(), 4.0 / std::pow(3.0, 0.25), 1e-6);
  // The standard error of the mean NLL: values a = ln 4 (three) and b = ln 4/3.
  const double a = std::log(4.0), b = std::log(4.0 / 3.0), mean = (3 * a + b) / 4;
  const double variance = (3 * (a - mean) * (a - mean) + (b - mean) * (b - mean)) / 4;
  EXPECT_NEAR(nll.ppl_error(), nll.ppl() * std::sqrt(variance / 3), 1e-6);
  // The running estimate after chunk 0: both NLLs ln 4.
  ASSERT_EQ(running.size(), 2u);
  EXPECT_NEAR(running[0], 4.0, 1e-6);
  EXPECT_NEAR(running[1], nll.ppl(), 1e-12);
  EXPECT_EQ(engine.firsts, (std::vector<int64_t>{3, 3}));
}

TEST(Perplexity, EachChunkStartsWithBosWhenTheVocabularyAddsIt) {
  const std::vector<int32_t> tokens = {1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1};
  AlternatingEngine engine;
  perplexity(engine, tokens, chunk_layout(12, 6, -1), /*bos=*/1, nullptr);
  ASSERT_EQ(engine.seen.size(), 2u);
  EXPECT_EQ(engine.seen[0], (std::vector<int32_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(engine.seen[1], (std::vector<int32_t>{1, 1, 1, 0, 1, 1}));  // its first token, 0, replaced
}

TEST(Perplexity, LayoutTakesWholeChunksUpToTheLimit) {
  EXPECT_EQ(chunk_layout(1000, 100, -1).n_chunks, 10);
  EXPECT_EQ(chunk_layout(1099, 100, -1).n_chunks, 10);
  EXPECT_EQ(chunk_layout(1000, 100, 3).n_chunks, 3);
  EXPECT_EQ(chunk_layout(1000, 100, -1).first, 50);
  EXPECT_EQ(chunk_layout(1000, 100, -1).scored(), 49);
  EXPECT_EQ(chunk_layout(1000, 101, -1).scored(), 50);
}

// Zero chunks would score nothing and report a perplexity of 1.
TEST(Perplexity, ZeroChunksIsAUsageErrorNotAPerfectScore) {
  try {
    chunk_layout(1000, 100, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
  }
}

TEST(Perplexity, TooFewTokensOrATinyContextIsRefused) {
  try {
    chunk_layout(199, 100, -1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(e.what()).find("at least 200"), std::string::npos) << e.what();
  }
  try {
    chunk_layout(100, 3, -1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

TEST(Perplexity, ATokenOutsideTheVocabularyIsRefusedBeforeEvaluating) {
  const std::vector<int32_t> tokens = {0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 2};
  AlternatingEngine engine;
  EXPECT_THROW(perplexity(engine, tokens, chunk_layout(12, 6, -1), std::nullopt, nullptr), Error);
  EXPECT_TRUE(engine.seen.empty());
}

}  // namespace
}  // namespace synapse::eval
