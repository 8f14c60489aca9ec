#include <nlohmann/json.hpp>

#include "synapse/error.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {

namespace {

using nlohmann::json;

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(ErrorKind::Unsupported, "tokenizer.json: " + what);
}

// Visits a component and, for a "Sequence", each of its parts.
template <typename Visit>
void for_each_component(const json& component, const char* list_key, Visit visit) {
  if (!component.is_object()) return;
  if (component.value("type", "") == "Sequence" && component.contains(list_key)) {
    for (const json& part : component[list_key]) for_each_component(part, list_key, visit);
    return;
  }
  visit(component);
}

// The pre-tokenizers' regexes in order: Split's, Digits', and GPT-2's for a
// ByteLevel one that splits by its own regex. Byte-level BPE is all we support.
std::vector<std::string> pretokenizer_patterns(const json& root) {
  std::vector<std::string> patterns;
  bool byte_level = false;
  for_each_component(root.value("pre_tokenizer", json()), "pretokenizers", [&](const json& p) {
    const std::string type = p.value("type", "");
    if (type == "Split" && p.contains("pattern") && p["pattern"].contains("Regex")) {
      patterns.push_back(p["pattern"]["Regex"].get<std::string>());
    } else if (type == "Digits") {
      patterns.push_back(p.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
    } else if (type == "ByteLevel") {
      byte_level = true;
      if (p.value("use_regex", true)) {
        for (std::string& pattern : pretokenizer_patterns_for("gpt2")) patterns.push_back(std::move(pattern));
      }
    } else {
      unsupported("pre-tokenizer '" + type + "'");
    }
  });
  if (!byte_level) unsupported("not a byte-level BPE tokenizer");
  if (patterns.empty()) unsupported("no pre-tokenizer regex");
  return patterns;
}

// Whether the normalizer is (or, in a Sequence, includes) NFC.
bool normalizes_nfc(const json& root) {
  bool nfc = false;
  for_each_component(root.value("normalizer", json()), "normalizers",
                     [&](const json& n) { nfc = nfc || n.value("type", "") == "NFC"; });
  return nfc;
}

// The BOS token a TemplateProcessing post-processor puts before a single text.
std::optional<std::string> template_bos(const json& root) {
  std::optional<std::string> bos;
  for_each_component(root.value("post_processor", json()), "processors", [&](const json& p) {
    if (p.value("type", "") != "TemplateProcessing" || !p.contains("single") || p["single"].empty()) return;
    const json& first = p["single"][0];
    if (first.contains("SpecialToken")) bos = first["SpecialToken"]["id"].get<std::string>();
  });
  return bos;
}

// tokenizer_config.json names tokens as a string or as {"content": ...}.
std::optional<std::string> config_token(const json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const json& t = config[key];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_object() && t.contains("content")) return t["content"].get<std::string>();
  return std::nullopt;
}

std::pair<std::string, std::string> parse_merge(const json& merge, size_t rank) {
  if (merge.is_array() && merge.size() == 2) return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  if (merge.is_string()) {
    const std::string s = merge.get<std::string>();
    const size_t space = s.find(' ', 1);
    if (space != std::string::npos) return {s.substr(0, space), s.substr(space + 1)};
  }
  throw Error(ErrorKind::InvalidValue, "tokenizer.json: merge " + std::to_string(rank) + " is not two pieces");
}

// Ids must lie below the number of entries (a dense id space, maybe with a
// few gaps), which also bounds what a hostile file can make us allocate.
void place_token(Vocabulary& v, int64_t id, const std::string& text, TokenType type, size_t n_entries) {
  if (id < 0 || static_cast<uint64_t>(id) >= n_entries) {
    throw Error(ErrorKind::InvalidValue, "tokenizer.json: token '" + text + "' has id " + std::to_string(id));
  }
  const auto index = static_cast<size_t>(id);
  if (index >= v.tokens.size()) {
    v.tokens.resize(index + 1);  // gaps stay empty, unused
    v.types.resize(index + 1, TokenType::Unused);
  }
  v.tokens[index] = text;
  v.types[index] = type;
}

Vocabulary parse(const json& root, const json& config) {
  const json& model = root.at("model");
  if (model.value("type", "") != "BPE") unsupported("model type '" + model.value("type", "") + "'");

  Vocabulary v;
  v.kind = VocabularyKind::ByteLevelBpe;
  v.pretokenizer_patterns = pretokenizer_patterns(root);
  v.ignore_merges = model.value("ignore_merges", false);
  v.normalize_nfc = normalizes_nfc(root);
  const json& vocab = model.at("vocab");
  const json added = root.value("added_tokens", json::array());
  const size_t n_entries = vocab.size() + added.size();
  for (const auto& [text, id] : vocab.items()) place_token(v, id.get<int64_t>(), text, TokenType::Normal, n_entries);
  for (const json& t : added) {
    place_token(v, t.at("id").get<int64_t>(), t.at("content").get<std::string>(),
                t.value("special", false) ? TokenType::Control : TokenType::UserDefined, n_entries);
  }
  const json& merges = model.at("merges");
  for (size_t rank = 0; rank < merges.size(); ++rank) v.merges.push_back(parse_merge(merges[rank], rank));

  // BOS: the post-processor's, else the config's unless it says not to add it.
  const std::optional<std::string> from_template = template_bos(root);
  const std::optional<std::string> config_bos = config_token(config, "bos_token");
  v.add_bos = from_template || (config_bos && config.value("add_bos_token", true));
  const std::optional<std::string> bos = from_template ? from_template : config_bos;
  const std::optional<std::string> eos = config_token(config, "eos_token");
  v.finalize();  // builds the lookup find() needs
  const auto id_of = [&](const std::optional<std::string>& text, const char* what) -> std::optional<int32_t> {
    if (!text) return std::nullopt;
    const std::optional<int32_t> id = v.find(*text);
    if (!id) throw Error(ErrorKind::InvalidValue, std::string("tokenizer.json: ") + what + " '" + *text + "' is not a token");
    return id;
  };
  v.bos_id = id_of(bos, "BOS token");
  v.eos_id = id_of(eos, "EOS token");
  v.unk_id = id_of(model.contains("unk_token") && model["unk_token"].is_string()
                       ? std::optional<std::string>(model["unk_token"].get<std::string>())
                       : std::nullopt,
                   "UNK token");
  return v;
}

}  // namespace

Vocabulary vocabulary_from_hf_json(std::string_view tokenizer_json, std::string_view config_json) {
  try {
    const json root = json::parse(tokenizer_json);
    const json config = config_json.empty() ? json::object() : json::parse(config_json);
    return parse(root, config);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("tokenizer.json: ") + e.what());
  }
}

}  // namespace synapse
