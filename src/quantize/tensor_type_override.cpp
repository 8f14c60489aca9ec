#include "quantize/tensor_type_override.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synapse/error.h"

namespace synapse::quant {

namespace {

constexpr Encoding kEncodable[] = {Encoding::F32,  Encoding::F16,  Encoding::BF16, Encoding::Q8_0,
                                   Encoding::Q4_0, Encoding::Q4_1, Encoding::Q5_0, Encoding::Q5_1,
                                   Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};

std::string encodable_names() {
  std::string out;
  for (Encoding e : kEncodable) out.append(out.empty() ? "" : ", ").append(encoding_info(e).name);
  return out;
}

[[noreturn]] void bad(const std::string& where, std::string_view text, const std::string& why) {
  throw Error(ErrorKind::Usage, where + ": '" + std::string(text) + "': " + why);
}

bool is_blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

TensorTypeOverride parse_tensor_type(std::string_view text, const std::string& where) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) bad(where, text, "expected PATTERN=TYPE");
  if (eq == 0) bad(where, text, "missing tensor name pattern before '='");
  if (eq + 1 == text.size()) bad(where, text, "missing type after '='");
  std::string pattern(text.substr(0, eq));
  std::transform(pattern.begin(), pattern.end(), pattern.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string type_name(text.substr(eq + 1));
  const std::optional<Encoding> type = encoding_from_name(type_name);
  if (!type) bad(where, text, "unknown type '" + type_name + "' (types: " + encodable_names() + ")");
  if (std::find(std::begin(kEncodable), std::end(kEncodable), *type) == std::end(kEncodable))
    bad(where, text, "synapse cannot encode " + type_name + " (types: " + encodable_names() + ")");
  TensorTypeOverride o{pattern, *type, {}};
  // A region item (region:Mlp(3)) names tensors through the model's graph:
  // synapse quantize expands it (calibrate/precision_groups.h) before use.
  if (pattern.starts_with("region:")) return o;
  try {
    o.regex = std::regex(pattern);
  } catch (const std::regex_error& e) {
    bad(where, text, std::string("invalid regular expression: ") + e.what());
  }
  return o;
}

std::vector<TensorTypeOverride> parse_profile(std::string_view text, const std::string& source) {
  std::vector<TensorTypeOverride> out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const std::string where = source + ":" + std::to_string(line_no);
    while (!line.empty()) {
      const auto start = std::find_if_not(line.begin(), line.end(), is_blank);
      line.remove_prefix(static_cast<size_t>(start - line.begin()));
      if (line.empty() || line.front() == '#') break;
      const size_t len = static_cast<size_t>(std::find_if(line.begin(), line.end(), is_blank) - line.begin());
      out.push_back(parse_tensor_type(line.substr(0, len), where));
      line.remove_prefix(len);
    }
  }
  return out;
}

std::vector<TensorTypeOverride> read_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path) || !in)
    throw Error(ErrorKind::Io, "cannot read the profile", Error::kNoOffset, path);
  std::ostringstream text;
  text << in.rdbuf();  // sets text's failbit for an empty file, which is a valid (empty) profile
  return parse_profile(text.str(), path);
}

std::vector<TensorTypeOverride> overrides_from(std::span<const std::string> flags, const std::string& profile_path) {
  std::vector<TensorTypeOverride> out;
  for (const std::string& flag : flags) out.push_back(parse_tensor_type(flag));
  if (!profile_path.empty())
    for (TensorTypeOverride& o : read_profile(profile_path)) out.push_back(std::move(o));
  return out;
}

const TensorTypeOverride* find_override(std::span<const TensorTypeOverride> overrides, std::string_view name) {
  for (const TensorTypeOverride& o : overrides)
    if (std::regex_search(name.begin(), name.end(), o.regex)) return &o;
  return nullptr;
}

}  // namespace synapse::quant
