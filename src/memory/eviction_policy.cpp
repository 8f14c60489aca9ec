#include "memory/eviction_policy.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "synapse/error.h"

namespace synapse::memory {
namespace {

// Least recently used: each load or use stamps the item with a clock.
class LruPolicy final : public EvictionPolicy {
 public:
  explicit LruPolicy(uint32_t items) : stamp_(items, 0) {}
  const char* name() const override { return "lru"; }
  void on_load(uint32_t item) override { stamp_[item] = ++clock_; }
  void on_use(uint32_t item) override { stamp_[item] = ++clock_; }
  void on_evict(uint32_t) override {}
  uint32_t victim(std::span<const uint8_t> evictable) override {
    uint32_t best = kNone;
    const size_t n = std::min(evictable.size(), stamp_.size());
    for (size_t i = 0; i < n; ++i)
      if (evictable[i] && (best == kNone || stamp_[i] < stamp_[best])) best = static_cast<uint32_t>(i);
    return best;
  }

 private:
  std::vector<uint64_t> stamp_;
  uint64_t clock_ = 0;
};

// Frequency with aging: an item's score is the sum over its uses of
// 2^-(uses since then / half_life), so an expert that was popular long ago
// decays and leaves, while one used steadily stays over one used once just
// now. Scores survive eviction: an expert that comes back keeps its history.
// Instead of decaying every score on each use, the weight of a new use grows
// by 2^(1/half_life) (same order, O(1) per use); all scores are rescaled
// before that weight overflows. Ties (items never used) go to the older load.
class DecayedLfuPolicy final : public EvictionPolicy {
 public:
  DecayedLfuPolicy(uint32_t items, double half_life_uses)
      : score_(items, 0.0), stamp_(items, 0), growth_(std::exp2(1.0 / half_life_uses)) {}
  const char* name() const override { return "lfu"; }
  void on_load(uint32_t item) override { stamp_[item] = ++clock_; }
  void on_use(uint32_t item) override {
    stamp_[item] = ++clock_;
    score_[item] += weight_;
    weight_ *= growth_;
    if (weight_ > kRescaleAbove) {
      for (double& s : score_) s /= weight_;
      weight_ = 1.0;
    }
  }
  void on_evict(uint32_t) override {}
  uint32_t victim(std::span<const uint8_t> evictable) override {
    uint32_t best = kNone;
    const size_t n = std::min(evictable.size(), score_.size());
    for (size_t i = 0; i < n; ++i) {
      if (!evictable[i]) continue;
      if (best == kNone || score_[i] < score_[best] || (score_[i] == score_[best] && stamp_[i] < stamp_[best]))
        best = static_cast<uint32_t>(i);
    }
    return best;
  }

 private:
  static constexpr double kRescaleAbove = 1e150;
  std::vector<double> score_;
  std::vector<uint64_t> stamp_;
  uint64_t clock_ = 0;
  double weight_ = 1.0;  // what the next use adds
  double growth_;
};

// make_pool_policy's: `routed` ranks the experts and sees every event.
class PoolPolicy final : public EvictionPolicy {
 public:
  PoolPolicy(std::unique_ptr<EvictionPolicy> routed, std::vector<uint8_t> every_step)
      : routed_(std::move(routed)), every_step_(std::move(every_step)), last_use_(every_step_.size(), 0),
        experts_(every_step_.size(), 0) {}
  const char* name() const override { return routed_->name(); }
  void on_load(uint32_t item) override { routed_->on_load(item); }
  void on_use(uint32_t item) override {
    last_use_[item] = ++clock_;
    routed_->on_use(item);
  }
  void on_evict(uint32_t item) override { routed_->on_evict(item); }
  uint32_t victim(std::span<const uint8_t> evictable) override {
    const size_t n = std::min(evictable.size(), every_step_.size());
    bool any_expert = false;
    uint32_t latest = kNone;
    for (size_t i = 0; i < n; ++i) {
      experts_[i] = evictable[i] && !every_step_[i];
      any_expert |= experts_[i] != 0;
      // A weight loaded ahead and not yet used keeps its use of the last
      // step, so it goes after every weight used since.
      if (evictable[i] && every_step_[i] && (latest == kNone || last_use_[i] > last_use_[latest]))
        latest = static_cast<uint32_t>(i);
    }
    return any_expert ? routed_->victim(std::span<const uint8_t>(experts_.data(), n)) : latest;
  }

 private:
  std::unique_ptr<EvictionPolicy> routed_;
  std::vector<uint8_t> every_step_;
  std::vector<uint64_t> last_use_;
  std::vector<uint8_t> experts_;  // scratch: allocated once
  uint64_t clock_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_pool_policy(std::string_view name, std::vector<uint8_t> every_step) {
  auto routed = make_eviction_policy(name, static_cast<uint32_t>(every_step.size()));
  return std::make_unique<PoolPolicy>(std::move(routed), std::move(every_step));
}

std::unique_ptr<EvictionPolicy> make_eviction_policy(std::string_view name, uint32_t items) {
  if (name == "lru") return std::make_unique<LruPolicy>(items);
  // A half-life of `items` uses: for a per-layer expert cache with top-k
  // routing, items / k tokens, whatever the layer's expert count.
  if (name == "lfu") return std::make_unique<DecayedLfuPolicy>(items, std::max<double>(items, 1));
  throw Error(ErrorKind::Usage, "unknown eviction policy '" + std::string(name) + "' (known: lru, lfu)");
}

}  // namespace synapse::memory
