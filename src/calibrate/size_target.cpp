#include "calibrate/size_target.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "quantize/type_policy.h"
#include "synapse/error.h"

namespace synapse::calibrate {
namespace {

using PlanIndex = std::unordered_map<std::string, const quant::PlannedTensor*>;

uint64_t padded(uint64_t bytes, uint64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

// `options` with an override on every tensor of the table: the type an
// override gives does not change any other tensor's (an overridden tensor
// is left out of llama.cpp's mix), so its plan fixes the rest of the file.
quant::QuantizeOptions with_group_overrides(const quant::QuantizeOptions& options, const SensitivityTable& table) {
  quant::QuantizeOptions probe = options;
  probe.overrides = quant::parse_profile(profile_text(table, {std::vector<size_t>(table.groups.size(), 0)}),
                                         "the profile of the table's tensors");
  return probe;
}

// Each table tensor is in the plan, overridden, and in one group only.
void check_groups(const SensitivityTable& table, const PlanIndex& by_name, const std::string& input) {
  std::unordered_map<std::string, const std::string*> group_of;
  for (const GroupSensitivity& g : table.groups)
    for (const std::string& name : g.tensors) {
      const auto it = by_name.find(name);
      if (it == by_name.end())
        throw Error(ErrorKind::InvalidValue,
                    "the sensitivity table's group " + g.name + " names a tensor " + input +
                        " does not have: was the table measured on another model?",
                    Error::kNoOffset, name);
      if (it->second->override == nullptr)
        throw Error(ErrorKind::InvalidValue,
                    "the sensitivity table's group " + g.name +
                        " names a tensor llama.cpp's quantizer keeps as it is (it takes no per-tensor type)",
                    Error::kNoOffset, name);
      if (const auto [at, fresh] = group_of.emplace(name, &g.name); !fresh)
        throw Error(ErrorKind::InvalidValue,
                    "the sensitivity table puts a tensor in two groups, " + *at->second + " and " + g.name,
                    Error::kNoOffset, name);
    }
}

// Each candidate's bytes as its tensors lie in the file, after checking
// that the table's own count (the tensors alone) is this model's.
SensitivityTable with_file_bytes(SensitivityTable table, const PlanIndex& by_name, uint64_t alignment) {
  for (GroupSensitivity& g : table.groups) {
    for (SensitivityCandidate& c : g.candidates) {
      uint64_t raw = 0, in_file = 0;
      for (const std::string& name : g.tensors) {
        const quant::PlannedTensor& t = *by_name.at(name);
        uint64_t rows = 1;
        for (size_t d = 1; d < t.dims.size(); ++d) rows *= t.dims[d];
        const uint64_t bytes = rows * row_bytes(quant::fit_row(c.type, t.dims[0]), t.dims[0]);
        raw += bytes;
        in_file += padded(bytes, alignment);
      }
      if (raw != c.bytes)
        throw Error(ErrorKind::InvalidValue,
                    "the sensitivity table gives group " + g.name + " " + std::to_string(c.bytes) + " bytes in " +
                        encoding_info(c.type).name + ", this model's tensors take " + std::to_string(raw) +
                        ": was the table measured on another model?");
      c.bytes = in_file;
    }
  }
  return table;
}

}  // namespace

SizeTarget fit_to_size(const quant::QuantizeOptions& options, const SensitivityTable& table, uint64_t target) {
  if (options.type == nullptr || !quant::is_quantized(*options.type))
    throw Error(ErrorKind::Usage, "--target-bytes needs a quantized TYPE (llama.cpp gives f16, bf16 and f32 files no "
                                  "per-tensor types)");
  for (const GroupSensitivity& g : table.groups)
    if (g.candidates.empty())
      throw Error(ErrorKind::InvalidValue, "sensitivity table: group " + g.name + " has no candidates");
  const quant::QuantizeOptions probe = with_group_overrides(options, table);
  const quant::QuantizePlan plan = plan_quantize(probe);  // its override pointers point into probe
  PlanIndex by_name;
  for (const quant::PlannedTensor& t : plan.tensors) by_name.emplace(t.name, &t);
  check_groups(table, by_name, options.input);
  SizeTarget out;
  out.table = with_file_bytes(table, by_name, plan.alignment);
  out.fixed_bytes = plan.file_bytes;
  for (const GroupSensitivity& g : table.groups)
    for (const std::string& name : g.tensors) out.fixed_bytes -= padded(by_name.at(name)->bytes, plan.alignment);
  uint64_t least = out.fixed_bytes;
  for (const GroupSensitivity& g : out.table.groups) {
    uint64_t smallest = std::numeric_limits<uint64_t>::max();
    for (const SensitivityCandidate& c : g.candidates) smallest = std::min(smallest, c.bytes);
    least += smallest;
  }
  if (target < least)
    throw Error(ErrorKind::InvalidValue,
                "--target-bytes " + std::to_string(target) + " cannot be met: the smallest file the sensitivity "
                    "table allows is " + std::to_string(least) + " bytes (" + std::to_string(out.fixed_bytes) +
                    " of them outside its groups)");
  out.choice = choose_profile(out.table, target - out.fixed_bytes);
  out.profile = profile_text(out.table, out.choice);
  out.overrides = quant::parse_profile(out.profile, "the chosen profile");
  out.file_bytes = out.fixed_bytes + out.choice.bytes;
  return out;
}

}  // namespace synapse::calibrate
