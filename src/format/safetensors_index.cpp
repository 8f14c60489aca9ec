// model.safetensors.index.json: {"metadata": {...}, "weight_map": {tensor:
// shard file}}. Shard names come from a downloaded file, so each must be a
// plain file name in the index's folder, never a path out of it.
#include <nlohmann/json.hpp>

#include <set>
#include <utility>

#include "format/safetensors.h"
#include "synapse/error.h"

namespace synapse {

namespace {

// As the header reader's limit: index files nest three levels.
constexpr int kMaxDepth = 127;

bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
}

}  // namespace

std::map<std::string, std::string> parse_safetensors_index(std::string_view text) {
  using json = nlohmann::json;
  // The parser's callback refuses deep nesting, and a tensor named twice in
  // weight_map (nlohmann would keep the last silently).
  std::string top_key;
  bool seen_weight_map = false;
  std::set<std::string> names;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxDepth)
      throw Error(ErrorKind::InvalidValue, "index JSON nests deeper than " + std::to_string(kMaxDepth) + " levels");
    if (event != json::parse_event_t::key || !parsed.is_string()) return true;
    const std::string& key = parsed.get_ref<const std::string&>();
    if (depth == 1) {
      top_key = key;
      if (key == "weight_map" && std::exchange(seen_weight_map, true))
        throw Error(ErrorKind::DuplicateKey, "weight_map appears twice", Error::kNoOffset, key);
    } else if (depth == 2 && top_key == "weight_map" && !names.insert(key).second) {
      throw Error(ErrorKind::DuplicateTensor, "tensor appears twice in weight_map", Error::kNoOffset, key);
    }
    return true;
  };
  // nlohmann's lexer takes a NUL byte for the end of input.
  if (text.find('\0') != std::string_view::npos) throw Error(ErrorKind::InvalidValue, "index holds a NUL byte");
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/false);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("index is not valid JSON: ") + e.what());
  }
  if (doc.is_discarded()) throw Error(ErrorKind::InvalidValue, "index is not valid JSON");
  if (!doc.is_object()) throw Error(ErrorKind::InvalidValue, "index is not a JSON object");
  const auto it = doc.find("weight_map");
  if (it == doc.end() || !it->is_object())
    throw Error(ErrorKind::InvalidValue, "index has no weight_map object", Error::kNoOffset, "weight_map");

  std::map<std::string, std::string> out;
  for (const auto& [name, shard] : it->items()) {
    if (!shard.is_string())
      throw Error(ErrorKind::InvalidValue, "weight_map value is not a file name", Error::kNoOffset, name);
    const std::string& file = shard.get_ref<const std::string&>();
    if (!plain_file_name(file))
      throw Error(ErrorKind::InvalidValue, "shard '" + file + "' is not a file name in the index's folder",
                  Error::kNoOffset, name);
    out.emplace(name, file);
  }
  return out;
}

}  // namespace synapse
