#include "calibrate/profile_choice.h"

#include <algorithm>
#include <limits>

#include "calibrate/precision_groups.h"
#include "synapse/error.h"

namespace synapse::calibrate {
namespace {

// The least-KL choice within `room` bytes above the smallest candidates, on
// steps of room/kBudgetSteps bytes: best[s] is the least KL of the groups
// so far within s steps, each candidate's extra bytes rounded up (never
// over the room) or down (closer, but may overshoot) to steps. The smallest
// candidates cost no step, so some choice always exists.
ProfileChoice solve(const SensitivityTable& table, const std::vector<uint64_t>& smallest, uint64_t room,
                    bool round_up) {
  const size_t n = table.groups.size();
  const uint64_t step = std::max<uint64_t>(1, (room + kBudgetSteps - 1) / kBudgetSteps);
  const auto steps = static_cast<size_t>(room / step);
  const auto cost = [&](size_t g, const SensitivityCandidate& c) {
    return static_cast<size_t>((c.bytes - smallest[g] + (round_up ? step - 1 : 0)) / step);
  };
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> best(steps + 1, 0.0), next(steps + 1);
  std::vector<std::vector<uint16_t>> pick(n, std::vector<uint16_t>(steps + 1, 0));
  for (size_t g = 0; g < n; ++g) {
    std::fill(next.begin(), next.end(), kNone);
    const auto& candidates = table.groups[g].candidates;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const size_t c_cost = cost(g, candidates[c]);
      for (size_t s = c_cost; s <= steps; ++s) {
        const double kl = best[s - c_cost] + candidates[c].kl;
        if (kl < next[s]) {
          next[s] = kl;
          pick[g][s] = static_cast<uint16_t>(c);
        }
      }
    }
    best.swap(next);
  }
  ProfileChoice choice;
  choice.picks.resize(n);
  size_t s = steps;
  for (size_t g = n; g-- > 0;) {
    const size_t c = pick[g][s];
    choice.picks[g] = c;
    const SensitivityCandidate& cand = table.groups[g].candidates[c];
    s -= cost(g, cand);
    choice.bytes += cand.bytes;
    choice.kl += cand.kl;
  }
  return choice;
}

}  // namespace

ProfileChoice choose_profile(const SensitivityTable& table, uint64_t budget) {
  const size_t n = table.groups.size();
  std::vector<uint64_t> smallest(n, std::numeric_limits<uint64_t>::max());
  uint64_t least = 0;
  for (size_t g = 0; g < n; ++g) {
    const GroupSensitivity& group = table.groups[g];
    if (group.candidates.empty())
      throw Error(ErrorKind::InvalidValue, "sensitivity table: group " + group.name + " has no candidates");
    for (const SensitivityCandidate& c : group.candidates) smallest[g] = std::min(smallest[g], c.bytes);
    least += smallest[g];
  }
  if (least > budget)
    throw Error(ErrorKind::InvalidValue, "the measured groups need at least " + std::to_string(least) +
                                             " bytes in their smallest types; the budget leaves them " +
                                             std::to_string(budget));
  // Rounding up never overshoots but can miss a choice that fits exactly;
  // rounding down finds those but can overshoot: it is tried with less room
  // until it fits, and the better of the two kept.
  const uint64_t room = budget - least;
  ProfileChoice best = solve(table, smallest, room, true);
  for (uint64_t r = room; r > 0;) {
    const ProfileChoice down = solve(table, smallest, r, false);
    if (down.bytes <= budget) {
      if (down.kl < best.kl) best = down;
      break;
    }
    const uint64_t over = down.bytes - budget;
    r = over < r ? r - over : 0;
  }
  return best;
}

std::string profile_text(const SensitivityTable& table, const ProfileChoice& choice) {
  std::string text = "# synapse precision profile: one type per tensor (chosen for a byte budget)\n";
  for (size_t g = 0; g < table.groups.size(); ++g) {
    const GroupSensitivity& group = table.groups[g];
    const char* type = encoding_info(group.candidates[choice.picks[g]].type).name;
    text.append("# ").append(group.name).append("\n");
    for (const std::string& tensor : group.tensors) text.append("^").append(regex_escaped(tensor)).append("$=").append(type).append("\n");
  }
  return text;
}

}  // namespace synapse::calibrate
