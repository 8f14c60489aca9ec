// `synapse quantize --target-bytes`: one type per precision group, chosen
// from a sensitivity table (calibrate/sensitivity.h) to make the sum of the
// groups' measured KL divergences smallest while their bytes fit a budget:
// a multiple-choice knapsack, solved exactly on each candidate's bytes
// above its group's smallest in steps of 1/kBudgetSteps of what the budget
// leaves above the smallest candidates (rounded up, so the choice always
// fits and any budget the smallest candidates fit has one; and rounded
// down, which finds the choices that fit with no room to spare).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "encoding/encoding.h"
#include "calibrate/sensitivity.h"

namespace synapse::calibrate {

struct ProfileChoice {
  // Per group of the table, the index of the candidate chosen.
  std::vector<size_t> picks;
  uint64_t bytes = 0;  // of the groups, exactly
  double kl = 0;       // the sum of the picks' measured KL
};

inline constexpr int64_t kBudgetSteps = 20000;

// Throws Error(InvalidValue) when even the smallest candidates overflow the
// budget (saying how many bytes they need), or a group has no candidates.
ProfileChoice choose_profile(const SensitivityTable& table, uint64_t budget);

// The profile of a choice, as `quantize --profile` reads it: one line per
// tensor, "^NAME$=TYPE" (escaped for a regular expression).
std::string profile_text(const SensitivityTable& table, const ProfileChoice& choice);

}  // namespace synapse::calibrate
