// Which cached item to drop when a cache is full. Items are dense ids
// [0, items) (e.g. the experts of one layer, or every region of a model);
// the cache tells the policy what it loaded, used and dropped, and asks it
// for a victim among the items it may evict (cached and not pinned).
// Policies allocate nothing after construction: they run on the decode path.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace synapse::memory {

class EvictionPolicy {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  virtual ~EvictionPolicy() = default;
  virtual const char* name() const = 0;
  // The item was loaded into the cache (a miss).
  virtual void on_load(uint32_t item) = 0;
  // The cached item was used (a hit, or the use right after its load).
  virtual void on_use(uint32_t item) = 0;
  // The item left the cache.
  virtual void on_evict(uint32_t item) = 0;
  // The item to evict among those with evictable[item] != 0; kNone if none.
  virtual uint32_t victim(std::span<const uint8_t> evictable) = 0;
};

// Known policy names (e.g. "lru", "lfu"); throws Error(Usage) naming the
// known ones for any other name.
std::unique_ptr<EvictionPolicy> make_eviction_policy(std::string_view name, uint32_t items);

// The policy of a weight pool whose items are of two kinds: those with
// every_step[item] set are read once per step in the same order (a dense
// model's weights), the others when a router picks them (experts). Experts
// go first, ranked by the named policy (an expert waits tokens for its next
// use; a weight read every step, one step at most). Among the others the
// one used last goes first: in a cycle its next use is the farthest, where
// the least recently used (what LRU and decayed LFU evict in a cycle) is
// needed next, so those policies miss on every read once the pool is
// smaller than what cycles through it.
std::unique_ptr<EvictionPolicy> make_pool_policy(std::string_view name, std::vector<uint8_t> every_step);

}  // namespace synapse::memory
