// Per-tensor type overrides: llama-quantize's --tensor-type PATTERN=TYPE
// and precision profiles (files of such lines). PATTERN is a regular
// expression (ECMAScript, as std::regex) searched for anywhere in a tensor's
// name, TYPE a ggml type name (q8_0, q4_K, f16, ... in any case). How they
// apply is type_policy.h's business; this file parses and matches them.
#pragma once

#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "encoding/encoding.h"

namespace synapse::quant {

struct TensorTypeOverride {
  // As llama-quantize keeps it: lower-cased (so a pattern's "\D" reads as "\d").
  std::string pattern;
  Encoding type;
  std::regex regex;  // pattern, compiled once
};

// One PATTERN=TYPE, split at the first '=' as llama-quantize splits it. A
// pattern "region:NAME" is not a regular expression but a region of the
// model (its regex matches nothing until expanded; see
// calibrate/precision_groups.h).
// Throws Error(Usage) naming `where` (the flag or "FILE:LINE") for a missing
// '=', an empty pattern or type, an invalid regular expression, or a type
// that is not a ggml type or that Synapse cannot encode (e.g. q2_K).
TensorTypeOverride parse_tensor_type(std::string_view text, const std::string& where = "--tensor-type");

// A profile: PATTERN=TYPE items separated by blanks or newlines (the
// layout of llama-quantize's --tensor-type-file), '#' starting a comment
// to the end of its line. `source` names the text in errors ("FILE:LINE").
std::vector<TensorTypeOverride> parse_profile(std::string_view text, const std::string& source);
// The same from a file; Error(Io) when it cannot be read.
std::vector<TensorTypeOverride> read_profile(const std::string& path);

// The --tensor-type flags' overrides, then those of the profile at
// `profile_path` (none when empty): the order both quantize commands apply.
std::vector<TensorTypeOverride> overrides_from(std::span<const std::string> flags, const std::string& profile_path);

// The first override whose pattern occurs in `name` (llama.cpp stops at
// the first match), or null.
const TensorTypeOverride* find_override(std::span<const TensorTypeOverride> overrides, std::string_view name);

}  // namespace synapse::quant
