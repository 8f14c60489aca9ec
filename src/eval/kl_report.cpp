#include "eval/kl_report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

namespace synapse::eval {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return buffer;
}

struct Estimate {
  double value = 0, error = 0;
};

// Mean and standard error of sum / count (no error under 11 values, as
// llama-perplexity).
Estimate mean_of(double sum, double sum2, int64_t count) {
  if (count < 1) return {};
  const double n = static_cast<double>(count);
  const double mean = sum / n;
  const double variance = sum2 / n - mean * mean;
  return {mean, variance > 0 && count > 10 ? std::sqrt(variance / (n - 1)) : 0.0};
}

// Covariance of the two NLL means.
double nll_covariance(const KlSums& s) {
  if (s.count() < 10) return 0;
  const double n = static_cast<double>(s.count());
  return (s.sum_nll_nll_base / n - s.nll.mean() * s.nll_base.mean()) / (n - 1);
}

Estimate log_ppl(const NllSums& nll) { return mean_of(nll.sum, nll.sum2, nll.count); }

Estimate log_ppl_ratio(const KlSums& s) {
  const Estimate q = log_ppl(s.nll), base = log_ppl(s.nll_base);
  const double variance = q.error * q.error + base.error * base.error - 2 * nll_covariance(s);
  return {q.value - base.value, std::sqrt(std::max(0.0, variance))};
}

Estimate rms_p_diff(const KlSums& s) {
  const Estimate mse = mean_of(s.sum_p_diff2, s.sum_p_diff4, s.count());
  const double rms = std::sqrt(mse.value);
  return {rms, rms > 0 ? 0.5 / rms * mse.error : 0.0};
}

Estimate same_top(const KlSums& s) {
  const double p = static_cast<double>(s.same_top) / static_cast<double>(s.count());
  return {p, s.count() > 1 ? std::sqrt(p * (1 - p) / static_cast<double>(s.count() - 1)) : 0.0};
}

// Linear interpolation between the sorted values around `fraction`.
float percentile(const std::vector<float>& sorted, double fraction) {
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  const double p = fraction * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<size_t>(p);
  const double t = p - static_cast<double>(i);
  return static_cast<float>((1 - t) * sorted[i] + t * sorted[std::min(i + 1, sorted.size() - 1)]);
}

float median(const std::vector<float>& sorted) {
  const size_t n = sorted.size();
  return n % 2 == 0 ? 0.5f * (sorted[n / 2 - 1] + sorted[n / 2]) : sorted[n / 2];
}

}  // namespace

std::string kl_chunk_header() {
  return "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS"
         "            Same top p\n";
}

std::string kl_chunk_line(int64_t chunk, const KlSums& s) {
  const Estimate lp = log_ppl(s.nll), ratio = log_ppl_ratio(s), kl = mean_of(s.kld.sum, s.kld.sum2, s.count());
  const Estimate rms = rms_p_diff(s), top = same_top(s);
  const double ppl = std::exp(lp.value);
  return format("%4lld    %9.4lf ± %9.4lf    %10.5lf ± %10.5lf    %10.5lf ± %10.5lf    %6.3lf ± %6.3lf %%    %6.3lf ± "
                "%6.3lf %%\n",
                static_cast<long long>(chunk + 1), ppl, ppl * lp.error, ratio.value, ratio.error, kl.value, kl.error,
                100 * rms.value, 100 * rms.error, 100 * top.value, 100 * top.error);
}

std::string kl_summary(const KlResult& result) {
  const KlSums& s = result.sums;
  if (s.count() < 100) return "(fewer than 100 scored tokens: no closing statistics)\n";
  std::string out = "====== Perplexity statistics ======\n";
  const Estimate lq = log_ppl(s.nll), lb = log_ppl(s.nll_base), ratio = log_ppl_ratio(s);
  const double ppl = std::exp(lq.value), ppl_base = std::exp(lb.value);
  const double cov = nll_covariance(s);
  out += format("Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", ppl, ppl * lq.error);
  out += format("Mean PPL(base)                : %10.6lf ± %10.6lf\n", ppl_base, ppl_base * lb.error);
  if (lq.error > 0 && lb.error > 0)
    out += format("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100 * cov / (lq.error * lb.error));
  out += format("Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n", ratio.value, ratio.error);
  const double ppl_ratio = std::exp(ratio.value);
  out += format("Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", ppl_ratio, ppl_ratio * ratio.error);
  const double diff_variance = ppl * lq.error * ppl * lq.error + ppl_base * lb.error * ppl_base * lb.error -
                               2 * ppl * ppl_base * cov;
  out += format("Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n\n", ppl - ppl_base,
                std::sqrt(std::max(0.0, diff_variance)));

  std::vector<float> kld = result.kld, p_diff = result.p_diff;
  std::sort(kld.begin(), kld.end());
  std::sort(p_diff.begin(), p_diff.end());
  out += "====== KL divergence statistics ======\n";
  const Estimate kl = mean_of(s.kld.sum, s.kld.sum2, s.count());
  out += format("Mean    KLD: %10.6lf ± %10.6lf\n", kl.value, kl.error);
  out += format("Maximum KLD: %10.6f\n", static_cast<double>(kld.back()));
  for (double f : {0.999, 0.99, 0.95, 0.90})
    out += format("%4.1f%%   KLD: %10.6f\n", 100 * f, static_cast<double>(percentile(kld, f)));
  out += format("Median  KLD: %10.6f\n", static_cast<double>(median(kld)));
  for (double f : {0.10, 0.05, 0.01, 0.001})
    out += format("%4.1f%%   KLD: %10.6f\n", 100 * f, static_cast<double>(percentile(kld, f)));
  out += format("Minimum KLD: %10.6f\n\n", static_cast<double>(kld.front()));

  out += "====== Token probability statistics ======\n";
  const Estimate dp = mean_of(s.sum_p_diff, s.sum_p_diff2, s.count());
  out += format("Mean    Δp: %6.3lf ± %5.3lf %%\n", 100 * dp.value, 100 * dp.error);
  out += format("Maximum Δp: %6.3lf%%\n", 100.0 * p_diff.back());
  for (double f : {0.999, 0.99, 0.95, 0.90, 0.75})
    out += format("%4.1f%%   Δp: %6.3lf%%\n", 100 * f, 100.0 * percentile(p_diff, f));
  out += format("Median  Δp: %6.3lf%%\n", 100.0 * median(p_diff));
  for (double f : {0.25, 0.10, 0.05, 0.01, 0.001})
    out += format("%4.1f%%   Δp: %6.3lf%%\n", 100 * f, 100.0 * percentile(p_diff, f));
  out += format("Minimum Δp: %6.3lf%%\n", 100.0 * p_diff.front());
  const Estimate rms = rms_p_diff(s), top = same_top(s);
  out += format("RMS Δp    : %6.3lf ± %5.3lf %%\n", 100 * rms.value, 100 * rms.error);
  out += format("Same top p: %6.3lf ± %5.3lf %%\n", 100 * top.value, 100 * top.error);
  return out;
}

}  // namespace synapse::eval
