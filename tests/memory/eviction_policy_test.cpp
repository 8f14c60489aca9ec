// The eviction policies: which cached item each one gives up, that the
// victim is always one the cache may evict, and that unknown names fail.
#include "memory/eviction_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "synapse/error.h"

namespace synapse::memory {
namespace {

TEST(EvictionPolicy, LruEvictsTheLeastRecentlyUsed) {
  auto lru = make_eviction_policy("lru", 4);
  EXPECT_STREQ(lru->name(), "lru");
  for (uint32_t i : {0u, 1u, 2u}) {
    lru->on_load(i);
    lru->on_use(i);
  }
  lru->on_use(0);  // 1 is now the oldest
  const std::vector<uint8_t> cached{1, 1, 1, 0};
  EXPECT_EQ(lru->victim(cached), 1u);
  lru->on_use(1);
  EXPECT_EQ(lru->victim(cached), 2u);
}

TEST(EvictionPolicy, LfuKeepsAFrequentlyUsedItemOverARecentOne) {
  auto lfu = make_eviction_policy("lfu", 8);
  EXPECT_STREQ(lfu->name(), "lfu");
  lfu->on_load(0);
  for (int i = 0; i < 5; ++i) lfu->on_use(0);
  lfu->on_load(1);
  lfu->on_use(1);  // used once, but after every use of 0
  const std::vector<uint8_t> cached{1, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(lfu->victim(cached), 1u);
  auto lru = make_eviction_policy("lru", 8);
  lru->on_load(0);
  for (int i = 0; i < 5; ++i) lru->on_use(0);
  lru->on_load(1);
  lru->on_use(1);
  EXPECT_EQ(lru->victim(cached), 0u);  // where LRU gives up the frequent one
}

// A pool of weights read in the same order every step, and experts: the
// experts go first, by the named policy; then the weight used last, whose
// next read is a whole step away; a weight loaded ahead but not yet used
// goes after every weight used since its last read.
TEST(EvictionPolicy, PoolPolicyGivesUpExpertsFirstThenTheWeightUsedLast) {
  const std::vector<uint8_t> every_step{1, 1, 1, 0, 0};
  auto pool = make_pool_policy("lru", every_step);
  EXPECT_STREQ(pool->name(), "lru");
  for (uint32_t i : {0u, 1u, 2u, 3u, 4u}) {
    pool->on_load(i);
    pool->on_use(i);
  }
  pool->on_use(3);  // expert 4 is now the least recently used
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{1, 1, 1, 1, 1}), 4u);
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{1, 1, 1, 1, 0}), 3u);
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{1, 1, 1, 0, 0}), 2u);  // used last of the three
  pool->on_use(0);
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{1, 1, 1, 0, 0}), 0u);
  pool->on_evict(1);
  pool->on_load(1);  // loaded ahead, not yet used: its last read is the oldest
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{0, 1, 1, 0, 0}), 2u);
  EXPECT_EQ(pool->victim(std::vector<uint8_t>{0, 0, 0, 0, 0}), EvictionPolicy::kNone);
  EXPECT_THROW(make_pool_policy("fifo", every_step), Error);
}

TEST(EvictionPolicy, LfuLetsAStalePopularItemGo) {
  // Item 0 was hot long ago; item 1 has been used steadily since: decay
  // makes 0 the victim even though its raw count is higher.
  auto lfu = make_eviction_policy("lfu", 4);
  lfu->on_load(0);
  for (int i = 0; i < 20; ++i) lfu->on_use(0);
  lfu->on_load(1);
  for (int i = 0; i < 12; ++i) lfu->on_use(1);
  EXPECT_EQ(lfu->victim(std::vector<uint8_t>{1, 1, 0, 0}), 0u);
}

TEST(EvictionPolicy, LfuScoresSurviveRescaling) {
  // Enough uses that the use weight is rescaled many times over.
  auto lfu = make_eviction_policy("lfu", 2);
  for (int i = 0; i < 100000; ++i) lfu->on_use(i % 3 == 0 ? 1 : 0);
  EXPECT_EQ(lfu->victim(std::vector<uint8_t>{1, 1}), 1u);
}

TEST(EvictionPolicy, VictimIsAlwaysEvictableAndNoneWhenNothingIs) {
  for (const char* name : {"lru", "lfu"}) {
    auto policy = make_eviction_policy(name, 6);
    for (uint32_t i = 0; i < 6; ++i) {
      policy->on_load(i);
      for (uint32_t k = 0; k <= i; ++k) policy->on_use(i);
    }
    // Only items 3 and 5 may go (the rest pinned or not cached).
    const std::vector<uint8_t> evictable{0, 0, 0, 1, 0, 1};
    const uint32_t victim = policy->victim(evictable);
    ASSERT_LT(victim, 6u) << name;
    EXPECT_TRUE(evictable[victim]) << name;
    EXPECT_EQ(policy->victim(std::vector<uint8_t>(6, 0)), EvictionPolicy::kNone) << name;
    EXPECT_EQ(policy->victim({}), EvictionPolicy::kNone) << name;
    policy->on_evict(victim);
  }
}

TEST(EvictionPolicy, UnknownNameIsAUsageErrorNamingTheKnownOnes) {
  try {
    make_eviction_policy("mru", 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string what = e.what();
    EXPECT_NE(what.find("mru"), std::string::npos) << what;
    EXPECT_NE(what.find("lru"), std::string::npos) << what;
    EXPECT_NE(what.find("lfu"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace synapse::memory
