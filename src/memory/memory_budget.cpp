#include "memory/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "synapse/error.h"

namespace synapse::memory {
namespace {

[[noreturn]] void bad_budget(std::string_view text) {
  throw Error(ErrorKind::Usage, "memory budget '" + std::string(text) +
                                    "' is not a size (e.g. 2G, 512M, 1500000000) or a share of the weights "
                                    "(e.g. 40%)");
}

// Reads a non-negative decimal number; returns the characters it used.
size_t read_number(std::string_view text, double& value) {
  size_t i = 0;
  bool digits = false, point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!digits) return 0;
  value = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr);
  return i;
}

}  // namespace

uint64_t BudgetSpec::resolve(uint64_t weight_bytes) const {
  if (percent <= 0.0) return bytes;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(weight_bytes) * percent / 100.0));
}

BudgetSpec parse_budget(std::string_view text) {
  double value = 0.0;
  const size_t used = read_number(text, value);
  if (used == 0) bad_budget(text);
  std::string_view unit = text.substr(used);
  BudgetSpec spec;
  if (unit == "%") {
    if (value <= 0.0 || value > 100.0)
      throw Error(ErrorKind::Usage, "memory budget '" + std::string(text) +
                                        "': a share of the weights is above 0% and at most 100% (or give a size, "
                                        "e.g. 2G)");
    spec.percent = value;
    return spec;
  }
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.remove_suffix(1);
  if (!unit.empty() && unit.back() == 'i') unit.remove_suffix(1);
  int shift = 0;
  if (unit.size() == 1) {
    switch (unit[0]) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: bad_budget(text);
    }
  } else if (!unit.empty()) {
    bad_budget(text);
  }
  const double bytes = value * std::ldexp(1.0, shift);
  if (bytes < 1.0 || bytes >= 1.8e19) bad_budget(text);
  spec.bytes = static_cast<uint64_t>(bytes);
  return spec;
}

std::optional<uint64_t> default_budget(uint64_t weight_bytes, uint64_t memory_limit) {
  const uint64_t headroom = std::max<uint64_t>(uint64_t{256} << 20, memory_limit / 10);
  if (memory_limit <= headroom || weight_bytes <= memory_limit - headroom) return std::nullopt;
  return memory_limit - headroom;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.*f %s", value < 10.0 ? 2 : 1, value, kUnits[unit]);
  }
  return text;
}

const char* to_string(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::Weights: return "weights";
    case MemoryCategory::Kv: return "kv";
    case MemoryCategory::Scratch: return "scratch";
    case MemoryCategory::ExpertCache: return "expert cache";
    case MemoryCategory::Staging: return "staging";
  }
  return "?";
}

uint64_t MemoryLedger::total() const { return std::accumulate(reserved_.begin(), reserved_.end(), uint64_t{0}); }

void MemoryLedger::require(MemoryCategory category, uint64_t bytes) const {
  const uint64_t used = total();
  if (budget_ >= used && bytes <= budget_ - used) return;
  const uint64_t available = budget_ >= used ? budget_ - used : 0;
  throw Error(ErrorKind::InsufficientMemory,
              std::string("the memory budget of ") + format_bytes(budget_) + " cannot hold the " +
                  to_string(category) + ": it needs " + std::to_string(bytes) + " bytes (" + format_bytes(bytes) +
                  "), " + std::to_string(available) + " bytes (" + format_bytes(available) + ") are available",
              Error::kNoOffset, to_string(category));
}

void MemoryLedger::reserve(MemoryCategory category, uint64_t bytes) {
  uint64_t& elastic = reserved_[static_cast<size_t>(elastic_)];
  uint64_t lent = 0;
  if (lender_ && category != elastic_ && bytes > available()) {
    lent = std::min(elastic, lender_->shrink(bytes - available()));
    elastic -= lent;
  }
  try {
    require(category, bytes);
  } catch (...) {
    elastic += lent;
    if (lent > 0) lender_->grow(lent);
    throw;
  }
  reserved_[static_cast<size_t>(category)] += bytes;
}

void MemoryLedger::release(MemoryCategory category, uint64_t bytes) {
  uint64_t& reserved = reserved_[static_cast<size_t>(category)];
  bytes = std::min(bytes, reserved);
  reserved -= bytes;
  if (!lender_ || category == elastic_ || bytes == 0) return;
  reserved_[static_cast<size_t>(elastic_)] += bytes;
  lender_->grow(bytes);
}

void MemoryLedger::make_elastic(MemoryCategory category, ElasticReservation* lender) {
  elastic_ = category;
  lender_ = lender;
}

}  // namespace synapse::memory
