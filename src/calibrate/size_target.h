// `synapse quantize --target-bytes SIZE --sensitivity TABLE.json`: the
// precision profile (one type per group of the table, profile_choice.h)
// whose output file is at most SIZE bytes, counted exactly. Everything
// outside the table's groups (header, metadata, tensor infos, the other
// tensors as TYPE encodes them) is laid out by quant::plan_quantize; the
// groups then get what is left, each candidate counted as its tensors lie
// in the file (with llama.cpp's row fallbacks and the alignment padding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/profile_choice.h"
#include "calibrate/sensitivity.h"
#include "quantize/quantize_model.h"

namespace synapse::calibrate {

struct SizeTarget {
  // The table with each candidate's bytes as its tensors lie in the file
  // (padded to the alignment): what `choice` was made from.
  SensitivityTable table;
  ProfileChoice choice;  // choice.bytes: the groups' bytes in the file
  std::string profile;   // profile_text of the choice (exact-name patterns)
  std::vector<quant::TensorTypeOverride> overrides;  // the profile, parsed
  uint64_t fixed_bytes = 0;  // the file outside the groups
  uint64_t file_bytes = 0;   // the output's size with the choice: fixed_bytes + choice.bytes
};

// The choice for `options` (input, TYPE, --pure, --imatrix; its own
// overrides are ignored) within `target` bytes. Throws Error(Usage) for a
// TYPE that is not quantized (llama.cpp then ignores per-tensor types);
// Error(InvalidValue) for a table that is not of this model (a tensor it
// lacks or cannot re-encode, a tensor in two groups, candidate bytes other
// than this model's) and for a target below the smallest file the table
// allows (saying that size); what plan_quantize and choose_profile throw.
SizeTarget fit_to_size(const quant::QuantizeOptions& options, const SensitivityTable& table, uint64_t target);

}  // namespace synapse::calibrate
