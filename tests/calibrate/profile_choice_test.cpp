// choose_profile: the least total KL whose bytes fit the budget, checked
// against trying every combination on random tables; budgets below the
// smallest types are refused with the bytes they would need; the profile
// text names every tensor of every group with its chosen type.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>

#include "calibrate/profile_choice.h"
#include "synapse/error.h"

namespace synapse::calibrate {
namespace {

SensitivityTable random_table(std::mt19937& rng, size_t groups) {
  const Encoding types[] = {Encoding::Q4_0, Encoding::Q4_K, Encoding::Q6_K, Encoding::Q8_0};
  SensitivityTable table;
  for (size_t g = 0; g < groups; ++g) {
    GroupSensitivity group;
    group.name = "G";
    group.name += std::to_string(g);
    group.tensors.push_back(group.name);
    uint64_t bytes = 1000 + rng() % 5000;
    double kl = 0.01 + (rng() % 1000) / 1e4;
    for (Encoding type : types) {
      group.candidates.push_back({type, bytes, kl, 0});
      bytes += 1 + rng() % 4000;  // more bytes, usually less KL (not always)
      kl *= 0.2 + (rng() % 1000) / 1000.0;
    }
    table.groups.push_back(std::move(group));
  }
  return table;
}

// The least KL within budget, trying every combination.
double brute_force(const SensitivityTable& table, uint64_t budget) {
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t, uint64_t, double)> walk = [&](size_t g, uint64_t bytes, double kl) {
    if (bytes > budget) return;
    if (g == table.groups.size()) {
      best = std::min(best, kl);
      return;
    }
    for (const auto& c : table.groups[g].candidates) walk(g + 1, bytes + c.bytes, kl + c.kl);
  };
  walk(0, 0, 0);
  return best;
}

TEST(ChooseProfile, FindsTheLeastKlThatFitsTheBudget) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const SensitivityTable table = random_table(rng, 1 + trial % 6);
    uint64_t least = 0, most = 0;
    for (const auto& g : table.groups) {
      least += g.candidates.front().bytes;
      most += g.candidates.back().bytes;
    }
    const uint64_t budget = least + rng() % (most - least + 1);
    const ProfileChoice choice = choose_profile(table, budget);
    EXPECT_LE(choice.bytes, budget);
    // Exact up to the rounding of bytes to 1/20000 of the budget per group.
    EXPECT_NEAR(choice.kl, brute_force(table, budget), 1e-12 + 1e-9 * choice.kl) << "trial " << trial;
    double kl = 0;
    uint64_t bytes = 0;
    for (size_t g = 0; g < table.groups.size(); ++g) {
      kl += table.groups[g].candidates[choice.picks[g]].kl;
      bytes += table.groups[g].candidates[choice.picks[g]].bytes;
    }
    EXPECT_EQ(bytes, choice.bytes);
    EXPECT_DOUBLE_EQ(kl, choice.kl);
  }
}

// A budget that holds the largest candidates with not a byte to spare
// (a uniform type's own size) gets them, whatever the rounding to steps.
TEST(ChooseProfile, ChoiceThatFitsExactlyIsFound) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    const SensitivityTable table = random_table(rng, 4 + trial % 9);
    uint64_t largest = 0;
    for (const auto& g : table.groups) largest += g.candidates.back().bytes;
    const ProfileChoice choice = choose_profile(table, largest);
    EXPECT_LE(choice.bytes, largest);
    EXPECT_NEAR(choice.kl, brute_force(table, largest), 1e-12) << "trial " << trial;
  }
}

TEST(ChooseProfile, BudgetBelowTheSmallestTypesSaysWhatTheyNeed) {
  std::mt19937 rng(9);
  const SensitivityTable table = random_table(rng, 3);
  uint64_t least = 0;
  for (const auto& g : table.groups) least += g.candidates.front().bytes;
  try {
    choose_profile(table, least - 1);
    FAIL() << "accepted a budget below the smallest types";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(e.what()).find(std::to_string(least)), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(choose_profile(table, least * 2));
}

TEST(ChooseProfile, ProfileTextNamesEachTensorWithItsType) {
  SensitivityTable table;
  table.groups.push_back({"Attention(0)", {"blk.0.attn_q.weight", "blk.0.attn_k.weight"}, 0,
                          {{Encoding::Q4_0, 10, 0.5, 0}, {Encoding::Q8_0, 20, 0.1, 0}}});
  table.groups.push_back({"Mlp(0)", {"blk.0.ffn_up.weight"}, 0, {{Encoding::Q4_K, 30, 0.2, 0}}});
  const ProfileChoice choice = choose_profile(table, 50);
  EXPECT_EQ(choice.picks, (std::vector<size_t>{1, 0}));
  const std::string text = profile_text(table, choice);
  EXPECT_NE(text.find("^blk\\.0\\.attn_q\\.weight$=q8_0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("^blk\\.0\\.attn_k\\.weight$=q8_0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("^blk\\.0\\.ffn_up\\.weight$=q4_K\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace synapse::calibrate
