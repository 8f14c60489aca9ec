#include "generate/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "support/alloc_counter.h"
#include "support/error_kind.h"
#include "support/greedy_params.h"
#include "synapse/error.h"

namespace synapse {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Temperature sampling with every truncation stage off.
SamplingParams untruncated(float temp, uint32_t seed = 1234) {
  SamplingParams p;
  p.temp = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

std::vector<float> logits_of_probs(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::vector<int> histogram(Sampler& sampler, const std::vector<float>& logits, int draws) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[static_cast<size_t>(sampler.sample(logits))];
  return counts;
}

std::vector<float> random_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(n);
  for (float& x : logits) x = normal(rng);
  return logits;
}

TEST(SamplerGreedy, ArgmaxWithLowestIdOnTies) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 2.5f};
  Sampler zero_temp(test::greedy(), 5);
  EXPECT_EQ(zero_temp.sample(logits), 1);

  SamplingParams negative = test::greedy();
  negative.temp = -1.0f;
  Sampler negative_temp(negative, 5);
  EXPECT_EQ(negative_temp.sample(logits), 1);
}

TEST(SamplerTopK, TopKOneEqualsGreedyAtAnyTemperature) {
  for (float temp : {0.1f, 0.8f, 1.0f, 5.0f, 100.0f}) {
    SamplingParams p;
    p.temp = temp;
    p.top_k = 1;
    p.seed = 7;
    Sampler top1(p, 300);
    Sampler argmax(test::greedy(), 300);
    for (uint32_t row = 0; row < 20; ++row) {
      std::vector<float> logits = random_logits(300, row);
      logits[17] = logits[250] = 20.0f + static_cast<float>(row);  // a tie at the top
      EXPECT_EQ(top1.sample(logits), argmax.sample(logits)) << "temp " << temp;
      EXPECT_EQ(top1.sample(logits), 17);
    }
  }
}

TEST(SamplerSeed, FixedSeedIsDeterministicAndResetReplays) {
  const std::vector<float> flat(16, 0.0f);
  Sampler a(untruncated(1.0f, 42), 16);
  Sampler b(untruncated(1.0f, 42), 16);
  std::vector<int32_t> first_run;
  for (int i = 0; i < 200; ++i) {
    first_run.push_back(a.sample(flat));
    EXPECT_EQ(first_run.back(), b.sample(flat));
  }
  a.reset();
  for (int i = 0; i < 200; ++i) EXPECT_EQ(a.sample(flat), first_run[static_cast<size_t>(i)]);
  EXPECT_EQ(a.seed(), 42u);
}

TEST(SamplerSeed, DifferentSeedsGiveDifferentSequences) {
  const std::vector<float> flat(16, 0.0f);
  Sampler a(untruncated(1.0f, 42), 16);
  Sampler b(untruncated(1.0f, 43), 16);
  int differing = 0;
  for (int i = 0; i < 200; ++i) differing += a.sample(flat) != b.sample(flat);
  EXPECT_GT(differing, 100);  // independent draws over 16 tokens differ ~94% of the time

  Sampler unseeded1(SamplingParams{}, 16);
  Sampler unseeded2(SamplingParams{}, 16);
  EXPECT_NE(unseeded1.seed(), unseeded2.seed());  // 1 in 2^32 to fail
}

// Pearson's chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probs, int draws) {
  double chi2 = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = probs[i] * draws;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi2;
}

std::vector<double> softmax(const std::vector<float>& logits, float temp) {
  std::vector<double> probs;
  double total = 0.0;
  for (float x : logits) total += std::exp(x / temp);
  for (float x : logits) probs.push_back(std::exp(x / temp) / total);
  return probs;
}

TEST(SamplerDistribution, MatchesSoftmaxWithoutTruncation) {
  const std::vector<float> logits = {0.0f, 0.5f, 1.0f, 1.5f, -1.0f};
  constexpr int kDraws = 20000;
  // 4 degrees of freedom: P(chi2 > 18.5) = 0.001 for a correct sampler.
  for (float temp : {1.0f, 2.0f}) {
    Sampler sampler(untruncated(temp), 5);
    const auto counts = histogram(sampler, logits, kDraws);
    EXPECT_LT(chi_square(counts, softmax(logits, temp), kDraws), 18.5) << "temp " << temp;
  }
}

TEST(SamplerTopP, KeepsSmallestSetReachingP) {
  // Ids deliberately not in probability order.
  const std::vector<float> logits = logits_of_probs({0.15, 0.5, 0.05, 0.3});
  struct Case {
    float top_p;
    std::vector<bool> kept;
  };
  for (const Case& c : {Case{0.45f, {false, true, false, false}},
                        Case{0.75f, {false, true, false, true}},
                        Case{0.9f, {true, true, false, true}},
                        Case{1.0f, {true, true, true, true}}}) {
    SamplingParams p = untruncated(1.0f);
    p.top_p = c.top_p;
    Sampler sampler(p, 4);
    const auto counts = histogram(sampler, logits, 4000);
    for (size_t id = 0; id < 4; ++id) {
      EXPECT_EQ(counts[id] > 0, c.kept[id]) << "top_p " << c.top_p << " token " << id;
    }
  }
}

TEST(SamplerTopP, CutBeyondTheFirstSortedBlock) {
  // 1000 equal logits: ties rank by id, so top-p 0.4 keeps about ids 0..399,
  // more than the 256 candidates sorted first.
  const std::vector<float> flat(1000, 0.0f);
  SamplingParams p = untruncated(1.0f);
  p.top_p = 0.4f;
  Sampler sampler(p, 1000);
  const auto counts = histogram(sampler, flat, 5000);
  int highest = 0;
  for (int id = 0; id < 1000; ++id) {
    if (counts[static_cast<size_t>(id)] > 0) highest = id;
  }
  EXPECT_GE(highest, 398);
  EXPECT_LE(highest, 401);
}

TEST(SamplerMinP, DropsTokensBelowMinPTimesMaxProb) {
  const std::vector<float> logits = logits_of_probs({0.15, 0.5, 0.05, 0.3});
  struct Case {
    float min_p;
    std::vector<bool> kept;
  };
  // Thresholds: 0.2 * 0.5 = 0.1 drops 0.05; 0.35 * 0.5 = 0.175 drops 0.15 too.
  for (const Case& c : {Case{0.2f, {true, true, false, true}},
                        Case{0.35f, {false, true, false, true}},
                        Case{1.0f, {false, true, false, false}}}) {
    SamplingParams p = untruncated(1.0f);
    p.min_p = c.min_p;
    Sampler sampler(p, 4);
    const auto counts = histogram(sampler, logits, 4000);
    for (size_t id = 0; id < 4; ++id) {
      EXPECT_EQ(counts[id] > 0, c.kept[id]) << "min_p " << c.min_p << " token " << id;
    }
  }
}

SamplingParams greedy_with_penalty(float penalty, int32_t last_n) {
  SamplingParams p = test::greedy();
  p.repeat_penalty = penalty;
  p.repeat_last_n = last_n;
  return p;
}

TEST(SamplerPenalty, DividesPositiveLogits) {
  const std::vector<float> logits = {2.0f, 1.9f, 0.0f};
  Sampler sampler(greedy_with_penalty(1.1f, 64), 3);
  EXPECT_EQ(sampler.sample(logits), 0);
  sampler.accept(0);
  EXPECT_EQ(sampler.sample(logits), 1);  // 2.0 / 1.1 = 1.82 < 1.9
}

TEST(SamplerPenalty, MultipliesNegativeLogits) {
  // Dividing -1.0 would make it -0.91 and keep token 0; multiplying gives -1.1.
  const std::vector<float> logits = {-1.0f, -1.05f, -5.0f};
  Sampler sampler(greedy_with_penalty(1.1f, 64), 3);
  EXPECT_EQ(sampler.sample(logits), 0);
  sampler.accept(0);
  EXPECT_EQ(sampler.sample(logits), 1);
}

TEST(SamplerPenalty, OffAtOneAndLimitedToLastN) {
  const std::vector<float> logits = {2.0f, 1.9f, 0.0f};
  Sampler off(greedy_with_penalty(1.0f, 64), 3);
  off.accept(0);
  EXPECT_EQ(off.sample(logits), 0);

  Sampler window(greedy_with_penalty(1.1f, 2), 3);
  window.accept(0);
  window.accept(2);
  EXPECT_EQ(window.sample(logits), 1);
  window.accept(2);  // pushes token 0 out of the last 2
  EXPECT_EQ(window.sample(logits), 0);

  window.accept(0);
  window.reset();
  EXPECT_EQ(window.sample(logits), 0);
}

TEST(SamplerNaN, NaNAndNegativeInfinityAreNeverPicked) {
  const std::vector<float> logits = {kNaN, 1.0f, -kInf, 0.5f, kNaN};
  Sampler argmax(test::greedy(), 5);
  EXPECT_EQ(argmax.sample(logits), 1);

  Sampler sampler(untruncated(1.0f), 5);
  const auto counts = histogram(sampler, logits, 2000);
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[3], 0);
}

TEST(SamplerNaN, PositiveInfinityWins) {
  const std::vector<float> logits = {1.0f, kInf, 3.0f};
  Sampler sampler(untruncated(0.5f), 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sampler.sample(logits), 1);
}

TEST(SamplerNaN, AllUnusableIsATypedError) {
  const std::vector<float> logits = {kNaN, -kInf, kNaN};
  Sampler sampler(SamplingParams{}, 3);
  EXPECT_EQ(test::error_kind([&] { sampler.sample(logits); }), ErrorKind::InvalidValue);
  Sampler argmax(test::greedy(), 3);
  EXPECT_EQ(test::error_kind([&] { argmax.sample(logits); }), ErrorKind::InvalidValue);
}

TEST(SamplerParams, RejectsInvalidValues) {
  const auto kind_for = [](auto edit, int32_t n_vocab = 8) {
    SamplingParams p;
    edit(p);
    return test::error_kind([&] { Sampler(p, n_vocab); });
  };
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.top_p = 0.0f; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.top_p = 1.5f; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.top_p = kNaN; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.min_p = -0.1f; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.min_p = 1.1f; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.temp = kNaN; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.repeat_penalty = 0.0f; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.repeat_last_n = -1; }), ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams& p) { p.presence_penalty = kInf; }),
            ErrorKind::InvalidValue);
  EXPECT_EQ(kind_for([](SamplingParams&) {}, 0), ErrorKind::InvalidValue);

  SamplingParams lenient;
  lenient.top_k = -5;  // off, as in llama.cpp
  lenient.temp = -1.0f;  // greedy
  EXPECT_NO_THROW(Sampler(lenient, 8));
}

TEST(SamplerParams, RejectsWrongRowSizeAndForeignTokens) {
  Sampler sampler(SamplingParams{}, 8);
  const std::vector<float> short_row(7, 0.0f);
  EXPECT_EQ(test::error_kind([&] { sampler.sample(short_row); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { sampler.accept(8); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { sampler.accept(-1); }), ErrorKind::InvalidValue);
}

TEST(SamplerAlloc, NoAllocationPerSample) {
  constexpr int32_t kVocab = 32000;
  const std::vector<float> logits = random_logits(kVocab, 99);

  SamplingParams defaults;  // top-k, top-p, min-p, temperature
  defaults.repeat_penalty = 1.1f;
  SamplingParams top_p_only = untruncated(0.9f);  // top-p over the full vocabulary
  top_p_only.top_p = 0.9f;
  top_p_only.repeat_penalty = 1.1f;
  SamplingParams argmax = test::greedy();
  argmax.repeat_penalty = 1.1f;

  for (const SamplingParams& p : {defaults, top_p_only, untruncated(1.0f), argmax}) {
    Sampler sampler(p, kVocab);
    size_t allocations = 0;
    {
      test::AllocationCounter counter;
      for (int i = 0; i < 10; ++i) sampler.accept(sampler.sample(logits));
      allocations = counter.count();
    }
    EXPECT_EQ(allocations, 0u);
  }
}

// The top-k stage keeps exactly the k best tokens in rank order (descending
// penalised logit, ties to the lower id), whichever way they are found:
// many ties, penalties that raise and lower logits, NaN and infinities.
TEST(SamplerTopK, KeepsTheKBestRankedTokensWithTiesPenaltiesAndNonFiniteLogits) {
  constexpr int32_t kVocab = 1000;
  std::mt19937 rng(7);
  std::vector<float> logits(kVocab);
  for (float& x : logits) x = static_cast<float>(static_cast<int>(rng() % 9)) * 0.5f;  // 9 levels: ties
  logits[3] = NAN;
  logits[17] = -INFINITY;
  logits[400] = INFINITY;
  const std::vector<int32_t> recent = {5, 5, 12, 400, 999, 300, 3};
  for (const int32_t k : {1, 7, 40, 2000}) {
    SamplingParams p;
    p.temp = 1.0f;
    p.top_k = k;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.3f;
    p.presence_penalty = -0.75f;  // raises repeated tokens past their neighbours
    p.frequency_penalty = 0.25f;
    Sampler sampler(p, kVocab);
    std::vector<int32_t> count(kVocab, 0);
    for (int32_t t : recent) {
      sampler.accept(t);
      ++count[static_cast<size_t>(t)];
    }
    // The expected ranking, from the whole row.
    std::vector<std::pair<float, int32_t>> ranked;
    for (int32_t id = 0; id < kVocab; ++id) {
      float x = logits[static_cast<size_t>(id)];
      if (std::isnan(x) || x == -INFINITY) continue;
      x = std::clamp(x, -FLT_MAX, FLT_MAX);
      if (count[static_cast<size_t>(id)] > 0) {
        x = x <= 0.0f ? x * p.repeat_penalty : x / p.repeat_penalty;
        x = std::clamp(x - (static_cast<float>(count[static_cast<size_t>(id)]) * p.frequency_penalty + p.presence_penalty),
                       -FLT_MAX, FLT_MAX);
      }
      ranked.push_back({x, id});
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    ranked.resize(std::min(ranked.size(), static_cast<size_t>(k)));
    std::vector<float> dist(kVocab);
    sampler.distribution(logits, dist);
    std::vector<int32_t> kept;
    for (int32_t id = 0; id < kVocab; ++id)
      if (dist[static_cast<size_t>(id)] > 0.0f) kept.push_back(id);
    std::vector<int32_t> expected;
    for (const auto& r : ranked)
      if (std::exp(static_cast<double>(r.first - ranked[0].first)) > 0.0) expected.push_back(r.second);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(kept, expected) << "top_k " << k;
    // Greedy picks the first of the ranking.
    p.temp = 0.0f;
    Sampler greedy(p, kVocab);
    for (int32_t t : recent) greedy.accept(t);
    EXPECT_EQ(greedy.sample(logits), ranked[0].second) << "top_k " << k;
  }
}

}  // namespace
}  // namespace synapse
