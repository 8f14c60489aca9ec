// Replaying a recorded MoE routing trace against an expert cache of a given
// size, to measure eviction policies rather than assume one (issue 7): hits
// and misses for each policy and for Belady's optimal (MIN), which knows the
// future and so bounds what any policy can reach on the same trace.
//
// The model: each step's executed experts are used in layer order, then
// expert order; a use of an expert not in its cache is a miss that loads it,
// evicting the policy's victim when the cache is full. Every expert is
// evictable except the one being loaded (no prefetch, no pins), so MIN is
// optimal for exactly this sequence.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace synapse::memory {

struct ExpertUse {
  uint32_t layer = 0;
  uint32_t expert = 0;
};

struct RoutingTrace {
  // Experts each layer has (highest expert index traced + 1; 0: no experts).
  std::vector<uint32_t> experts_per_layer;
  // The experts each step executed, in layer then expert order.
  std::vector<std::vector<ExpertUse>> steps;
};

// One cache per layer that has experts, or one cache for all of them. A
// global cache holds as many experts as the per-layer caches together.
enum class CacheScope { PerLayer, Global };

// The size of a layer's cache: a fraction of its experts (at least one), or
// a count (at most all of them).
struct CacheSize {
  double fraction = 0;  // used when count is 0
  uint32_t count = 0;
  uint32_t experts_of(uint32_t layer_experts) const;
};

struct CacheSimResult {
  std::string policy;
  uint64_t capacity = 0;  // experts held, over all caches
  uint64_t experts = 0;   // experts of all layers
  uint64_t hits = 0;
  uint64_t misses = 0;
  double hit_rate() const { return hits + misses ? static_cast<double>(hits) / (hits + misses) : 0.0; }
};

// Replays the trace with the named policy (make_eviction_policy's names, or
// "optimal" for MIN); throws Error(Usage) for an unknown name.
CacheSimResult simulate_expert_cache(const RoutingTrace& trace, const CacheSize& size, CacheScope scope,
                                     std::string_view policy);

}  // namespace synapse::memory
