// Statistics of paired benchmark rounds: two engines measured once each per
// round, compared through the per-round ratio A / B. The median ratio, a
// bootstrap 95% confidence interval of it (rounds resampled with
// replacement, percentile interval) and a verdict against a target ratio.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace synapse::bench {

// Median of `values` (the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);

// The q-quantile (0..1) of `sorted`, interpolated linearly between ranks; NaN when empty.
double quantile_of_sorted(const std::vector<double>& sorted, double q);

inline constexpr int kBootstrapResamples = 10000;
inline constexpr double kConfidenceLevel = 0.95;

struct ConfidenceInterval {
  double low = 0;
  double high = 0;
};

// Percentile bootstrap of the median of `values`: `resamples` samples of
// values.size() values drawn with replacement by a std::mt19937_64 seeded
// with `seed`, the (1 - level) / 2 and (1 + level) / 2 quantiles of their
// medians. Nullopt below two values (no spread to resample).
std::optional<ConfidenceInterval> bootstrap_median_ci(const std::vector<double>& values, uint64_t seed,
                                                      int resamples = kBootstrapResamples,
                                                      double level = kConfidenceLevel);

enum class Verdict { Win, Loss, Inconclusive };

// "win", "loss" or "inconclusive".
std::string verdict_name(Verdict verdict);

// Win when the whole interval lies above `target`, loss when it lies below,
// otherwise (or without an interval) inconclusive.
Verdict verdict_against(const std::optional<ConfidenceInterval>& ci, double target);

// One row's result: rounds where both engines succeeded give a ratio.
struct PairedSummary {
  double median_a = 0;         // over A's successful rounds
  double median_b = 0;         // over B's successful rounds
  std::vector<double> ratios;  // A / B of the rounds where both succeeded
  double median_ratio = 0;
  std::optional<ConfidenceInterval> ci;  // of median_ratio
  double target = 1.0;
  Verdict verdict = Verdict::Inconclusive;
};

// `a` and `b` hold each round's t/s, nullopt for a round whose run failed.
PairedSummary summarize_paired(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                               double target, uint64_t seed);

}  // namespace synapse::bench
