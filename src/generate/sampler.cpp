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
    reject("repeat_last_n must be >= 0",
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
  load(logits);
  // The filters below never remove the top candidate, so greedy can skip them.
  if (params_.temp <= 0.0f) return candidates_[0].id;
  apply_top_k();
  apply_top_p();
  apply_min_p();
  apply_temperature();
  return draw();
}

void Sampler::distribution(std::span<const float> logits, std::span<float> p) {
  if (p.size() != static_cast<size_t>(n_vocab_))
    throw Error(ErrorKind::InvalidValue, "sampling: a distribution row needs one entry per vocabulary token");
  load(logits);
  std::fill(p.begin(), p.end(), 0.0f);
  if (params_.temp <= 0.0f) {
    p[static_cast<size_t>(candidates_[0].id)] = 1.0f;
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
void Sampler::check_row(std::span<const float> logits) const {
  if (logits.size() != static_cast<size_t>(n_vocab_))
    throw Error(ErrorKind::InvalidValue, "sampling: logits row has " + std::to_string(logits.size()) +
                                             " entries, vocabulary has " + std::to_string(n_vocab_));
}

void Sampler::load_candidates(std::span<const float> logits) {
  check_row(logits);
  const bool penalize = !recent_count_.empty();
  size_t n = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    float logit = logits[i];
    if (std::isnan(logit) || logit == -INFINITY) continue;
    logit = penalize && recent_count_[i] > 0 ? penalized(logit, recent_count_[i]) : clamp_finite(logit);
    candidates_[n++] = {static_cast<int32_t>(i), logit, 0.0f};
  }
  if (n == 0) {
    throw Error(ErrorKind::InvalidValue, "sampling: every logit is -inf or NaN");
  }
  n_candidates_ = n;
  n_sorted_ = 0;
}

void Sampler::load(std::span<const float> logits) {
  // Greedy is the first candidate in rank order; top-k keeps the first k.
  const int32_t keep = params_.temp <= 0.0f ? 1 : params_.top_k;
  if (keep > 0) load_best(logits, static_cast<size_t>(keep));
  else load_candidates(logits);
}

namespace {

// Rank order: descending logit, equal logits by ascending id.
bool ranks_before(float logit_a, int32_t id_a, float logit_b, int32_t id_b) {
  return logit_a > logit_b || (logit_a == logit_b && id_a < id_b);
}

}  // namespace

// The `keep` best candidates load_candidates() and sort_prefix(keep) would
// leave, in one pass: a heap of the best so far (the worst on top), which
// a block of logits below the worst kept cannot enter. Penalised tokens
// (their logit moved either way) are loaded first, the rest as they come.
void Sampler::load_best(std::span<const float> logits, size_t keep) {
  check_row(logits);
  const auto worse = [](const Candidate& a, const Candidate& b) { return ranks_before(a.logit, a.id, b.logit, b.id); };
  Candidate* heap = candidates_.data();
  size_t n = 0;
  const auto offer = [&](int32_t id, float logit) {
    if (n == keep && !ranks_before(logit, id, heap[0].logit, heap[0].id)) return;
    if (n == keep) std::pop_heap(heap, heap + n--, worse);
    heap[n++] = {id, logit, 0.0f};
    std::push_heap(heap, heap + n, worse);
  };
  const bool penalize = !recent_count_.empty();
  for (size_t r = 0; penalize && r < recent_size_; ++r) {
    const auto id = static_cast<size_t>(recent_[r]);
    if (recent_count_[id] < 0) continue;  // loaded already (marked below)
    const float logit = logits[id];
    if (!std::isnan(logit) && logit != -INFINITY) offer(static_cast<int32_t>(id), penalized(logit, recent_count_[id]));
    recent_count_[id] = -recent_count_[id];
  }
  constexpr size_t kBlock = 16;
  for (size_t i = 0; i < logits.size();) {
    // A whole block below the worst kept is skipped (NaN compares false).
    if (n == keep && i + kBlock <= logits.size()) {
      const float floor = heap[0].logit;
      int above = 0;
      for (size_t j = 0; j < kBlock; ++j) above += logits[i + j] >= floor ? 1 : 0;
      if (above == 0) {
        i += kBlock;
        continue;
      }
    }
    const size_t end = std::min(logits.size(), i + kBlock);
    for (; i < end; ++i) {
      const float logit = logits[i];
      if (std::isnan(logit) || logit == -INFINITY || (penalize && recent_count_[i] != 0)) continue;
      offer(static_cast<int32_t>(i), clamp_finite(logit));
    }
  }
  for (size_t r = 0; penalize && r < recent_size_; ++r) {
    const auto id = static_cast<size_t>(recent_[r]);
    if (recent_count_[id] < 0) recent_count_[id] = -recent_count_[id];
  }
  if (n == 0) throw Error(ErrorKind::InvalidValue, "sampling: every logit is -inf or NaN");
  std::sort_heap(heap, heap + n, worse);
  n_candidates_ = n;
  n_sorted_ = n;
}

// llama.cpp's rule: a repeated token's logit moves toward "less likely"
// whatever its sign, so positive logits are divided, others multiplied;
// then the frequency and presence penalties.
float Sampler::penalized(float logit, int32_t count) const {
  logit = clamp_finite(logit);
  logit = logit <= 0.0f ? logit * params_.repeat_penalty : logit / params_.repeat_penalty;
  return clamp_finite(logit - (static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty));
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
