// A memory budget and the ledger that admits requests against it (SPEC §8).
// A budget is bytes ("2G", "512M", "1500000000") or a share of the model's
// weight bytes ("40%"). The ledger keeps one reservation per category;
// a reservation that does not fit fails before any compute with
// Error(InsufficientMemory) naming the category, the bytes required and
// the bytes available. One category may be elastic (the weight pool, a
// cache): it lends what others need and takes back what they release.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace synapse::memory {

struct BudgetSpec {
  uint64_t bytes = 0;     // when percent is 0
  double percent = 0.0;   // of the model's weight bytes, when above 0
  bool set() const { return bytes > 0 || percent > 0.0; }
  // The budget in bytes for a model of weight_bytes.
  uint64_t resolve(uint64_t weight_bytes) const;
};

// Parses "N", "N[KMGT][i][B]" (binary multiples: 1K = 1024) or "P%"
// (0 < P <= 100, decimals allowed). Throws Error(Usage) otherwise.
BudgetSpec parse_budget(std::string_view text);

// The budget a session takes when none is given: none (every weight
// resident, as mapped) while the weights fit in what the process may use
// (memory_limit: its cgroup's limit or the machine's memory) less a
// headroom of a tenth, at least 256 MiB; otherwise that much, so that the
// weights page instead of thrashing the page cache.
std::optional<uint64_t> default_budget(uint64_t weight_bytes, uint64_t memory_limit);

// "1.50 GiB", "12.3 MiB", "512 B".
std::string format_bytes(uint64_t bytes);

enum class MemoryCategory : uint8_t { Weights, Kv, Scratch, ExpertCache, Staging };
inline constexpr size_t kMemoryCategories = 5;
const char* to_string(MemoryCategory category);  // "weights", "kv", ...

// A reservation that can give bytes back (a cache evicting) and take more.
class ElasticReservation {
 public:
  virtual ~ElasticReservation() = default;
  // Gives up to `bytes` of the reservation back; returns how many it gave.
  virtual uint64_t shrink(uint64_t bytes) = 0;
  virtual void grow(uint64_t bytes) = 0;
};

class MemoryLedger {
 public:
  static constexpr uint64_t kUnlimited = UINT64_MAX;
  explicit MemoryLedger(uint64_t budget = kUnlimited) : budget_(budget) {}

  // Adds bytes to the category's reservation, first taking what is missing
  // from the elastic category, if any. Throws Error(InsufficientMemory)
  // when the total would still exceed the budget; the elastic category
  // then gets back what it gave.
  void reserve(MemoryCategory category, uint64_t bytes);
  // Takes bytes off the category's reservation; the elastic category, if
  // any, grows by them.
  void release(MemoryCategory category, uint64_t bytes);
  // From now on `category`'s reservation follows `lender`: it lends to the
  // other categories and takes back what they release. Null: none.
  void make_elastic(MemoryCategory category, ElasticReservation* lender);
  // Throws as reserve() would, without reserving.
  void require(MemoryCategory category, uint64_t bytes) const;

  uint64_t budget() const { return budget_; }
  uint64_t reserved(MemoryCategory category) const { return reserved_[static_cast<size_t>(category)]; }
  uint64_t total() const;
  uint64_t available() const { return budget_ - total(); }

 private:
  uint64_t budget_;
  std::array<uint64_t, kMemoryCategories> reserved_{};
  MemoryCategory elastic_ = MemoryCategory::Weights;
  ElasticReservation* lender_ = nullptr;
};

}  // namespace synapse::memory
