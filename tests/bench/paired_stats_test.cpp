// bench/run's statistics (median, bootstrap interval, verdict) and its plan
// parser.
#include "paired_stats.h"

#include <gtest/gtest.h>

#include <fstream>

#include "bench_plan.h"
#include "support/temp_dir.h"

namespace synapse::bench {
namespace {

using nlohmann::json;

std::vector<std::optional<double>> rounds(std::initializer_list<double> values) {
  return {values.begin(), values.end()};
}

TEST(PairedStats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(PairedStats, QuantileInterpolatesBetweenRanks) {
  const std::vector<double> sorted = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 1), 5);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.125), 1.5);
}

TEST(PairedStats, BootstrapIsDeterministicForASeedAndBracketsTheMedian) {
  const std::vector<double> ratios = {1.02, 0.97, 1.10, 1.05, 0.99, 1.08, 1.01, 1.04, 0.95, 1.06};
  const auto first = bootstrap_median_ci(ratios, 42);
  const auto again = bootstrap_median_ci(ratios, 42);
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->low, again->low);
  EXPECT_EQ(first->high, again->high);
  EXPECT_LE(first->low, median(ratios));
  EXPECT_GE(first->high, median(ratios));
  EXPECT_LT(first->low, first->high);
  // Within the data's range, as a percentile interval of medians must be.
  EXPECT_GE(first->low, 0.95);
  EXPECT_LE(first->high, 1.10);
}

TEST(PairedStats, BootstrapNeedsTwoValues) {
  EXPECT_FALSE(bootstrap_median_ci({}, 1));
  EXPECT_FALSE(bootstrap_median_ci({1.2}, 1));
}

TEST(PairedStats, ClearWin) {
  const PairedSummary s = summarize_paired(rounds({130, 131, 129, 130.5, 129.5, 130, 131, 130, 129, 130}),
                                           rounds({100, 100, 100, 100, 100, 100, 100, 100, 100, 100}), 1.0, 7);
  EXPECT_EQ(s.ratios.size(), 10u);
  EXPECT_NEAR(s.median_ratio, 1.30, 0.01);
  EXPECT_DOUBLE_EQ(s.median_a, 130);
  EXPECT_DOUBLE_EQ(s.median_b, 100);
  EXPECT_EQ(s.verdict, Verdict::Win);
  EXPECT_EQ(verdict_name(s.verdict), "win");
}

TEST(PairedStats, ClearLoss) {
  const PairedSummary s = summarize_paired(rounds({70, 71, 69, 70, 72, 70, 68, 70, 71, 70}),
                                           rounds({100, 101, 99, 100, 100, 102, 98, 100, 100, 101}), 1.0, 7);
  EXPECT_LT(s.median_ratio, 0.75);
  EXPECT_EQ(s.verdict, Verdict::Loss);
  EXPECT_EQ(verdict_name(s.verdict), "loss");
}

TEST(PairedStats, MixedRatiosAroundOneAreInconclusive) {
  const PairedSummary s = summarize_paired(rounds({95, 106, 98, 103, 92, 108, 100, 97, 104, 99}),
                                           rounds({100, 100, 100, 100, 100, 100, 100, 100, 100, 100}), 1.0, 7);
  ASSERT_TRUE(s.ci);
  EXPECT_LT(s.ci->low, 1.0);
  EXPECT_GT(s.ci->high, 1.0);
  EXPECT_EQ(s.verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_name(s.verdict), "inconclusive");
}

TEST(PairedStats, TargetMovesTheThreshold) {
  const auto a = rounds({130, 131, 129, 130, 130, 131, 129, 130, 130, 130});
  const auto b = rounds({100, 100, 100, 100, 100, 100, 100, 100, 100, 100});
  EXPECT_EQ(summarize_paired(a, b, 1.2, 7).verdict, Verdict::Win);
  EXPECT_EQ(summarize_paired(a, b, 1.4, 7).verdict, Verdict::Loss);
  EXPECT_EQ(summarize_paired(a, b, 1.3, 7).verdict, Verdict::Inconclusive);
  EXPECT_DOUBLE_EQ(summarize_paired(a, b, 1.2, 7).target, 1.2);
}

TEST(PairedStats, FailedRoundsLeaveTheirPairOut) {
  const std::vector<std::optional<double>> a = {130, std::nullopt, 132};
  const std::vector<std::optional<double>> b = {100, 100, std::nullopt};
  const PairedSummary s = summarize_paired(a, b, 1.0, 7);
  EXPECT_EQ(s.ratios, std::vector<double>{1.3});
  EXPECT_DOUBLE_EQ(s.median_a, 131);
  EXPECT_DOUBLE_EQ(s.median_b, 100);
  EXPECT_FALSE(s.ci);
  EXPECT_EQ(s.verdict, Verdict::Inconclusive);
}

class BenchRunPlan : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(model) << "not read by the parser"; }
  // The PlanError's field for `plan`, or "" when it parses.
  static std::string error_field(const json& plan) {
    try {
      parse_plan(plan);
    } catch (const PlanError& e) {
      return e.field();
    }
    return "";
  }
  test::TempDir dir;
  std::string model = dir.file("m.gguf");
};

TEST_F(BenchRunPlan, ExpandsModelsTimesThreads) {
  const Plan p = parse_plan(
      {{"rounds", 12},
       {"seed", 5},
       {"wrap", json::array({"nice"})},
       {"engine_args", {{"synapse", {"--mem-budget", "2G"}}, {"llama.cpp", {"--fa", "off"}}}},
       {"rows",
        json::array({{{"model", {model, model}}, {"threads", {1, 2}}, {"pp", 64}, {"tg", 16}, {"target", 1.1}}})}});
  EXPECT_EQ(p.rounds, 12);
  EXPECT_EQ(p.seed, 5u);
  EXPECT_EQ(p.wrap, std::vector<std::string>{"nice"});
  EXPECT_EQ(p.synapse_args, (std::vector<std::string>{"--mem-budget", "2G"}));
  EXPECT_EQ(p.peer_args, (std::vector<std::string>{"--fa", "off"}));
  ASSERT_EQ(p.cases.size(), 4u);
  EXPECT_EQ(p.cases[1].threads, 2);
  EXPECT_DOUBLE_EQ(p.cases[3].target, 1.1);
  EXPECT_EQ(p.cases[0].tests(), (std::vector<std::string>{"pp64", "tg16"}));
}

TEST_F(BenchRunPlan, DefaultsToTenRoundsOneThreadAndTargetOne) {
  const Plan p = parse_plan({{"rows", json::array({{{"model", model}, {"tg", 8}}})}});
  EXPECT_EQ(p.rounds, 10);
  EXPECT_EQ(p.membw_size, "1G");
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.cases[0].threads, 1);
  EXPECT_DOUBLE_EQ(p.cases[0].target, 1.0);
  EXPECT_EQ(p.cases[0].tests(), std::vector<std::string>{"tg8"});
}

TEST_F(BenchRunPlan, ErrorsNameTheField) {
  const json row = {{"model", model}, {"tg", 8}};
  auto plan_of = [](const json& rows) { return json{{"rows", rows}}; };
  auto with = [&](const std::string& key, const json& value) {
    json plan = plan_of(json::array({row}));
    plan[key] = value;
    return plan;
  };
  auto with_row = [&](const std::string& key, const json& value) {
    json bad = row;
    bad[key] = value;
    return plan_of(json::array({bad}));
  };
  EXPECT_EQ(error_field(json::array()), "(plan)");
  EXPECT_EQ(error_field(json{{"rounds", 10}}), "rows");
  EXPECT_EQ(error_field(plan_of(json::array())), "rows");
  EXPECT_EQ(error_field(with("rounds", 1)), "rounds");
  EXPECT_EQ(error_field(with("round", 10)), "round");
  EXPECT_EQ(error_field(with("wrap", "nice")), "wrap");
  EXPECT_EQ(error_field(with("seed", -1)), "seed");
  EXPECT_EQ(error_field(with("engine_args", json{{"llama", json::array()}})), "engine_args.llama");
  EXPECT_EQ(error_field(plan_of(json::array({row, json{{"model", dir.file("absent.gguf")}, {"tg", 8}}}))),
            "rows[1].model");
  EXPECT_EQ(error_field(with_row("model", json::array({model, 3}))), "rows[0].model[1]");
  EXPECT_EQ(error_field(with_row("threads", json::array({1, 0}))), "rows[0].threads[1]");
  EXPECT_EQ(error_field(with_row("target", 0)), "rows[0].target");
  EXPECT_EQ(error_field(with_row("tgs", 8)), "rows[0].tgs");
  EXPECT_EQ(error_field(with_row("tg", 0)), "rows[0]");
  EXPECT_EQ(error_field(plan_of(json::array({row}))), "");
}

TEST_F(BenchRunPlan, FileThatIsNotJson) {
  const std::string path = dir.file("plan.json");
  std::ofstream(path) << "{\"rows\": [";
  try {
    read_plan_file(path);
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.field(), "(file)");
  }
}

}  // namespace
}  // namespace synapse::bench
