#include "memory/memory_budget.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "synapse/error.h"

namespace synapse::memory {
namespace {

TEST(ParseBudget, ReadsBinarySizesPlainBytesAndShares) {
  EXPECT_EQ(parse_budget("2G").bytes, uint64_t{2} << 30);
  EXPECT_EQ(parse_budget("512M").bytes, uint64_t{512} << 20);
  EXPECT_EQ(parse_budget("1.5GiB").bytes, uint64_t{3} << 29);
  EXPECT_EQ(parse_budget("64k").bytes, uint64_t{64} << 10);
  EXPECT_EQ(parse_budget("1500000000").bytes, 1500000000u);
  const BudgetSpec share = parse_budget("40%");
  EXPECT_DOUBLE_EQ(share.percent, 40.0);
  EXPECT_EQ(share.resolve(1000), 400u);
  EXPECT_EQ(parse_budget("12.5%").resolve(1000), 125u);
}

TEST(ParseBudget, RejectsWhatIsNotASizeWithAUsageError) {
  for (const char* bad : {"", "G", "2X", "-1G", "0", "0%", "101%", "2GG", "%", "1e9", "nan"}) {
    try {
      parse_budget(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
    }
  }
}

TEST(ParseBudget, AShareOutsideZeroToAHundredPercentSaysSo) {
  for (const char* bad : {"0%", "101%", "200%"}) {
    try {
      parse_budget(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("at most 100%"), std::string::npos) << e.what();
    }
  }
}

TEST(DefaultBudget, NoneWhileTheWeightsFitAndTheLimitLessHeadroomOnceTheyDoNot) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  EXPECT_FALSE(default_budget(4 * kGiB, 24 * kGiB));
  EXPECT_FALSE(default_budget(21 * kGiB, 24 * kGiB));  // within 24 GiB less a tenth
  EXPECT_EQ(default_budget(30 * kGiB, 8 * kGiB), 8 * kGiB - 8 * kGiB / 10);
  EXPECT_EQ(default_budget(kGiB, kGiB), kGiB - (uint64_t{256} << 20));  // at least 256 MiB of headroom
  EXPECT_FALSE(default_budget(kGiB, 100 << 20));  // no room for any budget: leave it to the kernel
}

TEST(MemoryLedger, ReservationBeyondTheBudgetNamesCategoryRequiredAndAvailable) {
  MemoryLedger ledger(1000);
  ledger.reserve(MemoryCategory::Kv, 600);
  ledger.reserve(MemoryCategory::Scratch, 300);
  EXPECT_EQ(ledger.available(), 100u);
  try {
    ledger.reserve(MemoryCategory::Weights, 101);
    FAIL() << "over-budget reservation accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_EQ(e.subject(), "weights");
    EXPECT_NE(e.message().find("needs 101 bytes"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("100 bytes"), std::string::npos) << e.message();
  }
  EXPECT_EQ(ledger.total(), 900u);  // the failed reservation left nothing behind
  ledger.reserve(MemoryCategory::Weights, 100);
  EXPECT_EQ(ledger.available(), 0u);
}

// A cache that can give back all but `floor` bytes.
class FakeCache final : public ElasticReservation {
 public:
  explicit FakeCache(uint64_t held, uint64_t floor) : held_(held), floor_(floor) {}
  uint64_t shrink(uint64_t bytes) override {
    const uint64_t given = std::min(bytes, held_ - floor_);
    held_ -= given;
    return given;
  }
  void grow(uint64_t bytes) override { held_ += bytes; }
  uint64_t held() const { return held_; }

 private:
  uint64_t held_, floor_;
};

TEST(MemoryLedger, ElasticCategoryLendsWhatAnotherNeedsAndTakesBackWhatItReleases) {
  MemoryLedger ledger(1000);
  ledger.reserve(MemoryCategory::Scratch, 100);
  ledger.reserve(MemoryCategory::ExpertCache, 900);
  FakeCache cache(900, 500);
  ledger.make_elastic(MemoryCategory::ExpertCache, &cache);
  ledger.reserve(MemoryCategory::Kv, 300);  // taken from the cache
  EXPECT_EQ(ledger.reserved(MemoryCategory::ExpertCache), 600u);
  EXPECT_EQ(cache.held(), 600u);
  EXPECT_EQ(ledger.total(), 1000u);
  try {
    ledger.reserve(MemoryCategory::Kv, 101);  // the cache can give 100 only
    FAIL() << "a reservation past what the cache can give was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InsufficientMemory);
    EXPECT_EQ(e.subject(), "kv");
  }
  // The failed reservation gave the cache back what it lent.
  EXPECT_EQ(ledger.reserved(MemoryCategory::ExpertCache), 600u);
  EXPECT_EQ(cache.held(), 600u);
  EXPECT_EQ(ledger.reserved(MemoryCategory::Kv), 300u);
  ledger.release(MemoryCategory::Kv, 200);  // back to the cache
  EXPECT_EQ(ledger.reserved(MemoryCategory::Kv), 100u);
  EXPECT_EQ(ledger.reserved(MemoryCategory::ExpertCache), 800u);
  EXPECT_EQ(cache.held(), 800u);
  EXPECT_EQ(ledger.total(), 1000u);
}

TEST(MemoryLedger, ReleaseWithoutAnElasticCategoryFreesTheBytes) {
  MemoryLedger ledger(1000);
  ledger.reserve(MemoryCategory::Kv, 600);
  ledger.release(MemoryCategory::Kv, 200);
  EXPECT_EQ(ledger.available(), 600u);
  ledger.reserve(MemoryCategory::Weights, 600);
  EXPECT_EQ(ledger.available(), 0u);
}

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(uint64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(format_bytes(uint64_t{100} << 20), "100.0 MiB");
}

}  // namespace
}  // namespace synapse::memory
