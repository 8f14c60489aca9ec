// Replaying routing traces against expert caches: exact counts on hand-made
// traces, the optimal policy bounding every other one, and reading the
// routing out of a region trace.
#include "memory/expert_cache_sim.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>

#include "exec/region_trace_summary.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

// One step per expert set; all in layer 0 of `experts` experts.
RoutingTrace one_layer(uint32_t experts, const std::vector<std::vector<uint32_t>>& steps) {
  RoutingTrace trace;
  trace.experts_per_layer = {experts};
  for (const auto& step : steps) {
    auto& uses = trace.steps.emplace_back();
    for (uint32_t e : step) uses.push_back({0, e});
  }
  return trace;
}

CacheSize count(uint32_t n) { return CacheSize{0, n}; }

TEST(ExpertCacheSim, CountsHitsAndMissesOfAHandMadeTrace) {
  // Uses 0 0 0 1 2 0 with room for two: when 2 comes, LRU drops 0 (used
  // longest ago) and misses it again; LFU and the optimal drop 1.
  const RoutingTrace trace = one_layer(4, {{0}, {0}, {0}, {1}, {2}, {0}});
  const CacheSimResult lru = simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "lru");
  EXPECT_EQ(lru.policy, "lru");
  EXPECT_EQ(lru.capacity, 2u);
  EXPECT_EQ(lru.experts, 4u);
  EXPECT_EQ(lru.hits, 2u);
  EXPECT_EQ(lru.misses, 4u);
  const CacheSimResult lfu = simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "lfu");
  EXPECT_EQ(lfu.hits, 3u);
  EXPECT_EQ(lfu.misses, 3u);
  const CacheSimResult optimal = simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "optimal");
  EXPECT_EQ(optimal.hits, 3u);
  EXPECT_EQ(optimal.misses, 3u);
  EXPECT_DOUBLE_EQ(optimal.hit_rate(), 0.5);
}

TEST(ExpertCacheSim, OptimalLooksAhead) {
  // 0 1 2 0 1 0, room for two: at 2, MIN drops 1 (next used later than 0).
  const RoutingTrace trace = one_layer(4, {{0, 1}, {2}, {0}, {1}, {0}});
  EXPECT_EQ(simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "optimal").hits, 2u);
  EXPECT_EQ(simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "lru").hits, 1u);
}

TEST(ExpertCacheSim, OptimalIsAnUpperBoundOnARandomTrace) {
  // Three layers of 16 experts, 4 per step, skewed towards low indices.
  std::mt19937 rng(7);
  std::geometric_distribution<uint32_t> pick(0.15);
  RoutingTrace trace;
  trace.experts_per_layer = {16, 16, 16};
  for (int s = 0; s < 300; ++s) {
    auto& uses = trace.steps.emplace_back();
    for (uint32_t layer = 0; layer < 3; ++layer) {
      std::set<uint32_t> chosen;
      while (chosen.size() < 4) chosen.insert(pick(rng) % 16);
      for (uint32_t e : chosen) uses.push_back({layer, e});
    }
  }
  const uint64_t uses = 300 * 3 * 4;
  for (CacheScope scope : {CacheScope::PerLayer, CacheScope::Global}) {
    for (uint32_t n : {1u, 4u, 8u, 12u}) {
      const CacheSimResult best = simulate_expert_cache(trace, count(n), scope, "optimal");
      EXPECT_EQ(best.hits + best.misses, uses);
      EXPECT_EQ(best.capacity, 3u * n);
      for (const char* policy : {"lru", "lfu"}) {
        const CacheSimResult r = simulate_expert_cache(trace, count(n), scope, policy);
        EXPECT_EQ(r.hits + r.misses, uses) << policy;
        EXPECT_GE(best.hits, r.hits) << policy << " " << n;
      }
    }
    // Room for everything: only the first use of each expert misses.
    for (const char* policy : {"lru", "lfu", "optimal"})
      EXPECT_EQ(simulate_expert_cache(trace, count(16), scope, policy).misses, 3u * 16u) << policy;
  }
}

TEST(ExpertCacheSim, CacheSizeIsAFractionOrACountOfALayersExperts) {
  EXPECT_EQ((CacheSize{0.3, 0}).experts_of(10), 3u);
  EXPECT_EQ((CacheSize{0.25, 0}).experts_of(64), 16u);
  EXPECT_EQ((CacheSize{0.01, 0}).experts_of(64), 1u);  // never empty
  EXPECT_EQ((CacheSize{1.0, 0}).experts_of(64), 64u);
  EXPECT_EQ(count(16).experts_of(64), 16u);
  EXPECT_EQ(count(100).experts_of(64), 64u);
}

TEST(ExpertCacheSim, GlobalCacheHoldsWhatThePerLayerCachesHoldTogether) {
  RoutingTrace trace;
  trace.experts_per_layer = {0, 4, 4};  // layer 0 has no experts
  trace.steps = {{{1, 0}, {1, 1}, {2, 3}}, {{1, 2}, {2, 3}}};
  const CacheSimResult per_layer = simulate_expert_cache(trace, CacheSize{0.5, 0}, CacheScope::PerLayer, "lru");
  const CacheSimResult global = simulate_expert_cache(trace, CacheSize{0.5, 0}, CacheScope::Global, "lru");
  EXPECT_EQ(per_layer.capacity, 4u);
  EXPECT_EQ(global.capacity, 4u);
  EXPECT_EQ(global.experts, 8u);
  EXPECT_EQ(per_layer.hits, 1u);  // layer 2's expert 3 the second time
  EXPECT_EQ(global.hits, 1u);
}

TEST(ExpertCacheSim, UnknownPolicyIsAUsageError) {
  const RoutingTrace trace = one_layer(4, {{0}});
  try {
    simulate_expert_cache(trace, count(2), CacheScope::PerLayer, "belady");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

TEST(ExpertCacheSim, RoutingComesFromTheExecutedExpertRegionsInLayerOrder) {
  // Region ids out of layer order; a skipped expert and a non-expert region.
  auto line = [](int step, int region, const char* kind, int layer, int expert, const char* outcome) {
    std::ostringstream s;
    s << "{\"step\":" << step << ",\"position\":" << step << ",\"region\":" << region << ",\"kind\":\"" << kind
      << "\",\"layer\":" << layer << ",\"expert\":" << expert << ",\"outcome\":\"" << outcome
      << "\",\"weight_bytes_touched\":0}\n";
    return s.str();
  };
  std::istringstream in(line(0, 0, "Attention", 0, 0, "Executed") + line(0, 1, "Expert", 1, 0, "Executed") +
                        line(0, 2, "Expert", 0, 2, "Executed") + line(0, 3, "Expert", 0, 1, "Skipped") +
                        line(1, 1, "Expert", 1, 0, "Skipped") + line(1, 3, "Expert", 0, 1, "Executed"));
  const RoutingTrace trace = exec::routing_trace(exec::summarize_trace(in));
  EXPECT_EQ(trace.experts_per_layer, (std::vector<uint32_t>{3, 1}));
  ASSERT_EQ(trace.steps.size(), 2u);
  ASSERT_EQ(trace.steps[0].size(), 2u);
  EXPECT_EQ(trace.steps[0][0].layer, 0u);
  EXPECT_EQ(trace.steps[0][0].expert, 2u);
  EXPECT_EQ(trace.steps[0][1].layer, 1u);
  ASSERT_EQ(trace.steps[1].size(), 1u);
  EXPECT_EQ(trace.steps[1][0].expert, 1u);
}

TEST(ExpertCacheSim, ATraceWithoutExpertsIsAnError) {
  std::istringstream in(
      "{\"step\":0,\"position\":0,\"region\":0,\"kind\":\"Attention\",\"outcome\":\"Executed\","
      "\"weight_bytes_touched\":10}\n");
  try {
    exec::routing_trace(exec::summarize_trace(in));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
  }
}

}  // namespace
}  // namespace synapse::memory
