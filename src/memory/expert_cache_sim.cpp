#include "memory/expert_cache_sim.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "memory/eviction_policy.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

struct Replay {
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// The uses of one cache: item ids in [0, items), in time order.
struct CacheUses {
  uint32_t items = 0;
  uint32_t capacity = 0;
  std::vector<uint32_t> uses;
};

Replay replay_policy(const CacheUses& c, EvictionPolicy& policy) {
  std::vector<uint8_t> cached(c.items, 0);
  uint32_t held = 0;
  Replay r;
  for (uint32_t item : c.uses) {
    if (cached[item]) {
      ++r.hits;
      policy.on_use(item);
      continue;
    }
    ++r.misses;
    if (held == c.capacity) {
      const uint32_t victim = policy.victim(cached);
      if (victim == EvictionPolicy::kNone || victim >= c.items || !cached[victim])
        throw Error(ErrorKind::InvalidValue, std::string("eviction policy ") + policy.name() +
                                                 " chose no cached expert in a full cache");
      cached[victim] = 0;
      --held;
      policy.on_evict(victim);
    }
    cached[item] = 1;
    ++held;
    policy.on_load(item);
    policy.on_use(item);
  }
  return r;
}

// Belady's MIN: on a miss in a full cache, evict the cached item whose next
// use lies furthest ahead (or never comes).
Replay replay_optimal(const CacheUses& c) {
  constexpr size_t kNever = SIZE_MAX;
  // next[i]: the position of the next use of uses[i]'s item after i.
  std::vector<size_t> next(c.uses.size(), kNever);
  std::vector<size_t> seen(c.items, kNever);
  for (size_t i = c.uses.size(); i-- > 0;) {
    next[i] = seen[c.uses[i]];
    seen[c.uses[i]] = i;
  }
  std::vector<uint8_t> cached(c.items, 0);
  std::vector<size_t> next_use(c.items, kNever);  // of cached items
  uint32_t held = 0;
  Replay r;
  for (size_t i = 0; i < c.uses.size(); ++i) {
    const uint32_t item = c.uses[i];
    if (cached[item]) {
      ++r.hits;
    } else {
      ++r.misses;
      if (held == c.capacity) {
        uint32_t victim = 0;
        while (!cached[victim]) ++victim;
        for (uint32_t j = victim + 1; j < c.items; ++j)
          if (cached[j] && next_use[j] > next_use[victim]) victim = j;
        cached[victim] = 0;
        --held;
      }
      cached[item] = 1;
      ++held;
    }
    next_use[item] = next[i];
  }
  return r;
}

// The caches the scope asks for, with each one's uses in trace order.
std::vector<CacheUses> cache_uses(const RoutingTrace& trace, const CacheSize& size, CacheScope scope) {
  const size_t layers = trace.experts_per_layer.size();
  std::vector<CacheUses> caches;
  std::vector<size_t> cache_of(layers, SIZE_MAX);
  std::vector<uint32_t> offset(layers, 0);  // of a layer's experts in its cache
  if (scope == CacheScope::Global) caches.emplace_back();
  for (size_t l = 0; l < layers; ++l) {
    const uint32_t experts = trace.experts_per_layer[l];
    if (experts == 0) continue;
    if (scope == CacheScope::PerLayer) caches.emplace_back();
    cache_of[l] = caches.size() - 1;
    CacheUses& c = caches.back();
    offset[l] = c.items;
    c.items += experts;
    c.capacity += size.experts_of(experts);
  }
  for (const auto& step : trace.steps)
    for (const ExpertUse& use : step) {
      if (use.layer >= layers || use.expert >= trace.experts_per_layer[use.layer])
        throw Error(ErrorKind::InvalidValue, "routing trace: layer " + std::to_string(use.layer) + " expert " +
                                                 std::to_string(use.expert) + " is out of range");
      caches[cache_of[use.layer]].uses.push_back(offset[use.layer] + use.expert);
    }
  return caches;
}

}  // namespace

uint32_t CacheSize::experts_of(uint32_t layer_experts) const {
  if (count > 0) return std::min(count, layer_experts);
  // A small tolerance so 0.3 of 10 experts is 3, not 2.
  const double want = std::floor(fraction * layer_experts + 1e-9);
  return static_cast<uint32_t>(std::clamp<double>(want, 1.0, std::max<double>(layer_experts, 1.0)));
}

CacheSimResult simulate_expert_cache(const RoutingTrace& trace, const CacheSize& size, CacheScope scope,
                                     std::string_view policy) {
  if (policy != "optimal") make_eviction_policy(policy, 0);  // an unknown name fails even without caches
  CacheSimResult result;
  result.policy = policy;
  for (const CacheUses& c : cache_uses(trace, size, scope)) {
    Replay r;
    if (policy == "optimal") {
      r = replay_optimal(c);
    } else {
      auto p = make_eviction_policy(policy, c.items);
      r = replay_policy(c, *p);
    }
    result.capacity += c.capacity;
    result.experts += c.items;
    result.hits += r.hits;
    result.misses += r.misses;
  }
  return result;
}

}  // namespace synapse::memory
