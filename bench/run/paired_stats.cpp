#include "paired_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace synapse::bench {

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(below);
  return sorted[below] + frac * (sorted[above] - sorted[below]);
}

std::optional<ConfidenceInterval> bootstrap_median_ci(const std::vector<double>& values, uint64_t seed, int resamples,
                                                      double level) {
  if (values.size() < 2) return std::nullopt;
  if (resamples < 1 || level <= 0 || level >= 1) throw std::invalid_argument("bootstrap: bad resamples or level");
  std::mt19937_64 rng(seed);
  // Uniform indices from raw draws: std::uniform_int_distribution's output
  // differs between standard libraries, and the interval must not.
  const uint64_t n = values.size();
  std::vector<double> medians(static_cast<size_t>(resamples));
  std::vector<double> sample(values.size());
  for (double& m : medians) {
    for (double& v : sample) v = values[rng() % n];
    m = median(sample);
  }
  std::sort(medians.begin(), medians.end());
  return ConfidenceInterval{quantile_of_sorted(medians, (1 - level) / 2), quantile_of_sorted(medians, (1 + level) / 2)};
}

std::string verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Win:
      return "win";
    case Verdict::Loss:
      return "loss";
    case Verdict::Inconclusive:
      break;
  }
  return "inconclusive";
}

Verdict verdict_against(const std::optional<ConfidenceInterval>& ci, double target) {
  if (!ci) return Verdict::Inconclusive;
  if (ci->low > target) return Verdict::Win;
  if (ci->high < target) return Verdict::Loss;
  return Verdict::Inconclusive;
}

PairedSummary summarize_paired(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                               double target, uint64_t seed) {
  if (a.size() != b.size()) throw std::invalid_argument("paired rounds: the engines ran different round counts");
  PairedSummary s;
  std::vector<double> ok_a, ok_b;
  for (size_t r = 0; r < a.size(); ++r) {
    if (a[r]) ok_a.push_back(*a[r]);
    if (b[r]) ok_b.push_back(*b[r]);
    if (a[r] && b[r] && *b[r] > 0) s.ratios.push_back(*a[r] / *b[r]);
  }
  s.median_a = median(ok_a);
  s.median_b = median(ok_b);
  s.median_ratio = median(s.ratios);
  s.ci = bootstrap_median_ci(s.ratios, seed);
  s.target = target;
  s.verdict = verdict_against(s.ci, target);
  return s;
}

}  // namespace synapse::bench
