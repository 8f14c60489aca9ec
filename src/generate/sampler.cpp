#include "generate/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <string>

#include "synapse/error.h"

namespace synapse {
namespace {

// llama.cpp's top-p first sorts only this many candidates and sorts the rest
// only when their mass is needed; the result is the same as a full sort.
constexpr size_t kTopPFirstSort = 256;

[[noreturn]] void reject(const std::string& what, float value) {
  std::ostringstream message;
  message << "sampling: " << what << ", got " << value;
  throw Error(ErrorKind::InvalidValue, message.str());
}

void validate(const SamplingParams& p, int32_t n_vocab) {
  if (n_vocab <= 0) reject("n_vocab must be positive", static_cast<float>(n_vocab));
  if (std::isnan(p.temp)) reject("temp must be a number", p.temp);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) reject("top_p must be in (0, 1]", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) reject("min_p must be in [0, 1]", p.min_p);
  if (!(p.repeat_penalty > 0.0f && std::isfinite(p.repeat_penalty))) {
    reject("repeat_penalty must be a positive number", p.repeat_penalty);
  }
  if (p.repeat_last_n < 0) {
    reject("repeat_last_n must be >= 0 (resolve -1 to the context length first)",
           static_cast<float>(p.repeat_last_n));
  }
  if (!std::isfinite(p.frequency_penalty)) {
    reject("frequency_penalty must be a finite number", p.frequency_penalty);
  }
  if (!std::isfinite(p.presence_penalty)) {
    reject("presence_penalty must be a finite number", p.presence_penalty);
  }
}

// Keeps arithmetic on huge logits (a +inf input, a tiny temperature) from
// producing infinities that would turn the softmax into NaN.
float clamp_finite(float x) { return std::clamp(x, -FLT_MAX, FLT_MAX); }

uint32_t random_seed() { return std::random_device{}(); }

// A uniform double in [0, 1) from two 32-bit outputs, computed as libstdc++'s
// std::generate_canonical does it for std::uniform_real_distribution<double>,
// so a seeded run draws what llama.cpp's dist sampler draws there.
double uniform_unit(std::mt19937& rng) {
  const double low = static_cast<double>(rng());
  const double high = static_cast<double>(rng());
  const double u = (low + high * 4294967296.0) / 18446744073709551616.0;
  return u < 1.0 ? u : std::nextafter(1.0, 0.0);
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab) {
  validate(params_, n_vocab_);
  seed_ = params_.seed ? *params_.seed : random_seed();
  rng_.seed(seed_);
  candidates_.resize(static_cast<size_t>(n_vocab_));
  if (params_.repeat_last_n > 0) {
    recent_.resize(static_cast<size_t>(params_.repeat_last_n));
    recent_count_.assign(static_cast<size_t>(n_vocab_), 0);
  }
}

int32_t Sampler::sample(std::span<const float> logits) {
  load_candidates(logits);
  // The filters below never remove the top candidate, so greedy can skip them.
  if (params_.temp <= 0.0f) return greedy_pick();
  apply_top_k();
  apply_top_p();
  apply_min_p();
  apply_temperature();
  return draw();
}

void Sampler::distribution(std::span<const float> logits, std::span<float> p) {
  if (p.size() != static_cast<size_t>(n_vocab_))
    throw Error(ErrorKind::InvalidValue, "sampling: a distribution row needs one entry per vocabulary token");
  load_candidates(logits);
  std::fill(p.begin(), p.end(), 0.0f);
  if (params_.temp <= 0.0f) {
    p[static_cast<size_t>(greedy_pick())] = 1.0f;
    return;
  }
  apply_top_k();
  apply_top_p();
  apply_min_p();
  apply_temperature();
  float max_logit = candidates_[0].logit;
  for (size_t i = 1; i < n_candidates_; ++i) max_logit = std::max(max_logit, candidates_[i].logit);
  double total = 0.0;
  for (size_t i = 0; i < n_candidates_; ++i) total += std::exp(static_cast<double>(candidates_[i].logit - max_logit));
  for (size_t i = 0; i < n_candidates_; ++i)
    p[static_cast<size_t>(candidates_[i].id)] =
        static_cast<float>(std::exp(static_cast<double>(candidates_[i].logit - max_logit)) / total);
}

double Sampler::uniform() { return uniform_unit(rng_); }

int32_t Sampler::draw_from(std::span<const float> weights) {
  double total = 0.0;
  for (float w : weights) total += w;
  if (!(total > 0.0)) throw Error(ErrorKind::InvalidValue, "sampling: nothing to draw from");
  const double target = total * uniform_unit(rng_);
  double cumulative = 0.0;
  int32_t last_possible = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0f) continue;
    cumulative += weights[i];
    last_possible = static_cast<int32_t>(i);
    if (cumulative >= target) return last_possible;
  }
  return last_possible;  // rounding left target out of reach
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_) {
    throw Error(ErrorKind::InvalidValue, "sampling: accepted token " + std::to_string(token) +
                                             " is outside the vocabulary of " +
                                             std::to_string(n_vocab_));
  }
  if (recent_.empty()) return;
  if (recent_size_ == recent_.size()) {
    --recent_count_[static_cast<size_t>(recent_[recent_next_])];  // evict the oldest
  } else {
    ++recent_size_;
  }
  recent_[recent_next_] = token;
  ++recent_count_[static_cast<size_t>(token)];
  recent_next_ = (recent_next_ + 1) % recent_.size();
}

void Sampler::reset() {
  for (size_t i = 0; i < recent_size_; ++i) {
    recent_count_[static_cast<size_t>(recent_[i])] = 0;
  }
  recent_size_ = 0;
  recent_next_ = 0;
  seed_ = params_.seed ? *params_.seed : random_seed();
  rng_.seed(seed_);
}

// Copies the row into the candidate buffer, dropping tokens that can never
// be drawn (NaN, -inf) and applying the repetition penalties on the way.
void Sampler::load_candidates(std::span<const float> logits) {
  if (logits.size() != static_cast<size_t>(n_vocab_)) {
    throw Error(ErrorKind::InvalidValue, "sampling: logits row has " +
                                             std::to_string(logits.size()) +
                                             " entries, vocabulary has " +
                                             std::to_string(n_vocab_));
  }
  const bool penalize = !recent_count_.empty();
  size_t n = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    float logit = logits[i];
    if (std::isnan(logit) || logit == -INFINITY) continue;
    logit = clamp_finite(logit);
    if (penalize && recent_count_[i] > 0) {
      // llama.cpp's rule: a repeated token's logit moves toward "less likely"
      // whatever its sign, so positive logits are divided, others multiplied.
      if (logit <= 0.0f) {
        logit *= params_.repeat_penalty;
      } else {
        logit /= params_.repeat_penalty;
      }
      const auto count = static_cast<float>(recent_count_[i]);
      logit -= count * params_.frequency_penalty + params_.presence_penalty;
      logit = clamp_finite(logit);
    }
    candidates_[n++] = {static_cast<int32_t>(i), logit, 0.0f};
  }
  if (n == 0) {
    throw Error(ErrorKind::InvalidValue, "sampling: every logit is -inf or NaN");
  }
  n_candidates_ = n;
  n_sorted_ = 0;
}

// Candidates are still in id order here, so the first maximum has the lowest id.
int32_t Sampler::greedy_pick() const {
  size_t best = 0;
  for (size_t i = 1; i < n_candidates_; ++i) {
    if (candidates_[i].logit > candidates_[best].logit) best = i;
  }
  return candidates_[best].id;
}

// Extends the sorted prefix to n candidates. Everything past the prefix ranks
// below it, so sorting only [n_sorted_, end) keeps the whole prefix exact.
void Sampler::sort_prefix(size_t n) {
  n = std::min(n, n_candidates_);
  if (n <= n_sorted_) return;
  // Equal logits rank by ascending id, so results never depend on the sort.
  const auto ranks_before = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  auto* first = candidates_.data();
  std::partial_sort(first + n_sorted_, first + n, first + n_candidates_, ranks_before);
  n_sorted_ = n;
}

void Sampler::apply_top_k() {
  if (params_.top_k <= 0) return;
  const size_t k = std::min(static_cast<size_t>(params_.top_k), n_candidates_);
  sort_prefix(k);
  n_candidates_ = k;
}

// Keeps the smallest set of most likely candidates whose probability reaches
// top_p (always at least one). Probabilities in float, as llama.cpp has them.
void Sampler::apply_top_p() {
  if (params_.top_p >= 1.0f) return;
  sort_prefix(kTopPFirstSort);
  const float max_logit = candidates_[0].logit;
  float total = 0.0f;
  for (size_t i = 0; i < n_candidates_; ++i) {
    candidates_[i].p = std::exp(candidates_[i].logit - max_logit);
    total += candidates_[i].p;
  }
  float cumulative = 0.0f;
  for (size_t i = 0; i < n_candidates_; ++i) {
    if (i == n_sorted_) sort_prefix(n_candidates_);
    cumulative += candidates_[i].p / total;
    if (cumulative >= params_.top_p) {
      n_candidates_ = i + 1;
      break;
    }
  }
  n_sorted_ = std::min(n_sorted_, n_candidates_);
}

// Keeps candidates with p >= min_p * p_max, i.e. logit >= max + log(min_p).
// Compaction preserves order, so a sorted prefix stays sorted.
void Sampler::apply_min_p() {
  if (params_.min_p <= 0.0f) return;
  float max_logit = candidates_[0].logit;
  if (n_sorted_ == 0) {
    for (size_t i = 1; i < n_candidates_; ++i) {
      max_logit = std::max(max_logit, candidates_[i].logit);
    }
  }
  const float min_logit = max_logit + std::log(params_.min_p);
  size_t kept = 0;
  for (size_t i = 0; i < n_candidates_; ++i) {
    if (candidates_[i].logit >= min_logit) candidates_[kept++] = candidates_[i];
  }
  n_candidates_ = kept;
  n_sorted_ = std::min(n_sorted_, kept);
}

void Sampler::apply_temperature() {
  for (size_t i = 0; i < n_candidates_; ++i) {
    candidates_[i].logit = clamp_finite(candidates_[i].logit / params_.temp);
  }
}

// Softmax and one draw in a single cumulative scan, as llama.cpp's dist
// sampler does (float probabilities, double sums). Every call consumes one
// uniform draw, a lone candidate included, as in the llama.cpp build the
// peer harness pins (newer builds skip the draw there).
int32_t Sampler::draw() {
  float max_logit = candidates_[0].logit;
  if (n_sorted_ == 0) {
    for (size_t i = 1; i < n_candidates_; ++i) {
      max_logit = std::max(max_logit, candidates_[i].logit);
    }
  }
  double total = 0.0;
  for (size_t i = 0; i < n_candidates_; ++i) {
    candidates_[i].p = std::exp(candidates_[i].logit - max_logit);
    total += candidates_[i].p;
  }
  const double target = total * uniform_unit(rng_);
  double cumulative = 0.0;
  size_t last_possible = 0;
  for (size_t i = 0; i < n_candidates_; ++i) {
    if (candidates_[i].p <= 0.0f) continue;  // underflowed: never drawn
    cumulative += candidates_[i].p;
    last_possible = i;
    if (cumulative >= target) return candidates_[i].id;
  }
  return candidates_[last_possible].id;  // rounding left target out of reach
}

}  // namespace synapse
