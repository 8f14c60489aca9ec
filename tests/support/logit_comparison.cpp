#include "support/logit_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace synapse::test {
namespace {

// log(sum(exp(row))), shifted by the row's maximum so it cannot overflow.
double log_sum_exp(std::span<const float> row) {
  const double top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (float v : row) sum += std::exp(double{v} - top);
  return top + std::log(sum);
}

}  // namespace

RowComparison compare_row(std::span<const float> peer, std::span<const float> ours) {
  if (peer.size() != ours.size() || peer.size() < 2)
    throw std::invalid_argument("compare_row: rows of different lengths, or shorter than 2");
  RowComparison c;
  size_t peer_best = 0, our_best = 0;
  for (size_t i = 0; i < peer.size(); ++i) {
    const float diff = std::abs(peer[i] - ours[i]);
    c.max_abs_diff = std::max(c.max_abs_diff, std::isnan(diff) ? INFINITY : diff);  // a NaN must not vanish
    if (peer[i] > peer[peer_best]) peer_best = i;
    if (ours[i] > ours[our_best]) our_best = i;
  }
  float second = -INFINITY;
  for (size_t i = 0; i < peer.size(); ++i)
    if (i != peer_best) second = std::max(second, peer[i]);
  c.peer_top2_gap = peer[peer_best] - second;
  c.top1_agrees = peer_best == our_best;

  const double peer_lse = log_sum_exp(peer), our_lse = log_sum_exp(ours);
  for (size_t i = 0; i < peer.size(); ++i) {
    const double log_p = peer[i] - peer_lse, log_q = ours[i] - our_lse;
    c.kl += std::exp(log_p) * (log_p - log_q);
  }
  c.kl = std::max(c.kl, 0.0);  // rounding can leave a tiny negative sum for equal rows
  return c;
}

double LogitComparison::decisive_agreement() const {
  return decisive == 0 ? 1.0 : static_cast<double>(decisive_agree) / static_cast<double>(decisive);
}

std::string LogitComparison::summary() const {
  char line[256];
  std::snprintf(line, sizeof line,
                "max|d| %.3g (row %zu, %zu rows over), top-1 %zu/%zu (decisive %zu/%zu), KL mean %.3g max %.3g, %zu rows set aside",
                max_abs_diff, worst_row, rows_over, top1_agree, rows, decisive_agree, decisive, mean_kl, max_kl, set_aside);
  return line;
}

double root_mean_square(std::span<const float> values) {
  double sum = 0;
  for (float v : values) sum += double{v} * v;
  return values.empty() ? 0 : std::sqrt(sum / static_cast<double>(values.size()));
}

namespace {

size_t rows_of(std::span<const float> a, std::span<const float> b, size_t vocab) {
  if (vocab == 0 || a.size() != b.size() || a.size() % vocab != 0)
    throw std::invalid_argument("compare_logits: " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                " logits are not the same rows of " + std::to_string(vocab));
  return a.size() / vocab;
}

float row_diff(std::span<const float> a, std::span<const float> b, size_t vocab, size_t row) {
  return compare_row(a.subspan(row * vocab, vocab), b.subspan(row * vocab, vocab)).max_abs_diff;
}

}  // namespace

LogitComparison compare_logits(std::span<const float> peer, std::span<const float> ours, size_t vocab,
                               float tolerance, const std::vector<bool>& set_aside,
                               std::optional<float> over_bound) {
  const size_t rows = rows_of(peer, ours, vocab);
  if (!set_aside.empty() && set_aside.size() != rows)
    throw std::invalid_argument("compare_logits: set_aside marks " + std::to_string(set_aside.size()) + " of " +
                                std::to_string(rows) + " rows");
  LogitComparison s;
  double kl_sum = 0;
  for (size_t r = 0; r < rows; ++r) {
    if (!set_aside.empty() && set_aside[r]) {
      ++s.set_aside;
      continue;
    }
    ++s.rows;
    const auto peer_row = peer.subspan(r * vocab, vocab);
    const RowComparison c = compare_row(peer_row, ours.subspan(r * vocab, vocab));
    if (c.max_abs_diff > s.max_abs_diff) {
      s.max_abs_diff = c.max_abs_diff;
      s.worst_row = r;
    }
    s.top1_agree += c.top1_agrees;
    const bool over = c.max_abs_diff > tolerance;
    s.rows_over += over;
    if (c.peer_top2_gap > (over ? over_bound.value_or(tolerance) : tolerance)) {
      ++s.decisive;
      s.decisive_agree += c.top1_agrees;
    }
    kl_sum += c.kl;
    s.max_kl = std::max(s.max_kl, c.kl);
  }
  s.mean_kl = s.rows == 0 ? 0 : kl_sum / static_cast<double>(s.rows);
  return s;
}

std::vector<bool> rows_the_oracle_gives_ours(std::span<const float> peer, std::span<const float> ours,
                                             std::span<const float> oracle, size_t vocab, float tolerance) {
  const size_t rows = rows_of(peer, ours, vocab);
  rows_of(ours, oracle, vocab);
  std::vector<bool> given(rows);
  for (size_t r = 0; r < rows; ++r)
    given[r] = row_diff(peer, ours, vocab, r) > tolerance && row_diff(oracle, ours, vocab, r) <= tolerance;
  return given;
}

}  // namespace synapse::test
