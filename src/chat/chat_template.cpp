#include "chat/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/jinja_eval.h"
#include "chat/jinja_parser.h"
#include "format/gguf_reader.h"
#include "synapse/error.h"

namespace synapse::chat {

ChatTemplate::ChatTemplate(std::shared_ptr<const jinja::Template> parsed) : parsed_(std::move(parsed)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::parse(std::string_view source) {
  return ChatTemplate(std::make_shared<const jinja::Template>(jinja::parse_template(source)));
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, const RenderOptions& options) const {
  jinja::List message_values;
  for (const ChatMessage& m : messages) {
    jinja::Dict dict;
    dict.set("role", m.role);
    dict.set("content", m.content);
    message_values.emplace_back(std::move(dict));
  }
  // The variables transformers' apply_chat_template passes (tools stays undefined).
  const std::vector<std::pair<std::string, jinja::Value>> variables = {
      {"messages", jinja::Value(std::move(message_values))},
      {"add_generation_prompt", options.add_generation_prompt},
      {"bos_token", options.bos_token},
      {"eos_token", options.eos_token},
  };
  jinja::Evaluator evaluator(jinja::RenderLimits{}, options.fixed_date);
  return evaluator.render(*parsed_, variables);
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw Error(ErrorKind::Io, "cannot read chat template file " + path);
  return text.str();
}

// tokenizer_config.json holds "chat_template" as a string, or as a list of
// {"name", "template"} where the one named "default" is the chat template.
std::optional<std::string> template_from_tokenizer_config(const std::string& text, const std::string& path) {
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return std::nullopt;
  auto it = config.find("chat_template");
  if (it == config.end()) throw Error(ErrorKind::MissingKey, path + " is JSON without a \"chat_template\"", Error::kNoOffset, "chat_template");
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    for (const auto& entry : *it) {
      if (entry.is_object() && entry.contains("name") && entry["name"] == "default" && entry.contains("template") &&
          entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
  }
  throw Error(ErrorKind::InvalidValue, path + ": \"chat_template\" is neither a string nor a list with a \"default\" entry",
              Error::kNoOffset, "chat_template");
}

}  // namespace

std::string resolve_chat_template(std::string_view name_or_file) {
  if (auto builtin = builtin_chat_template(name_or_file)) return *builtin;
  const std::string path(name_or_file);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Usage, "--chat-template '" + path + "' is not a regular file");
  std::ifstream probe(path, std::ios::binary);
  if (!probe) {
    throw Error(ErrorKind::Usage, "--chat-template '" + path +
                                      "' is neither a builtin name (chatml, llama2, llama3, llama3.2, mistral, qwen2.5, "
                                      "qwen3, smollm2, tinyllama, olmoe) nor a readable file");
  }
  probe.close();
  std::string text = read_file(path);
  if (auto from_config = template_from_tokenizer_config(text, path)) return *from_config;
  return text;
}

std::optional<std::string> chat_template_from_hf_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // gguf-py's order: tokenizer_config.json, chat_template.jinja, chat_template.json.
  const auto from_json = [&](const char* name) -> std::optional<std::string> {
    const fs::path path = fs::path(folder) / name;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    const std::string text = read_file(path.string());
    const nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object() || !config.contains("chat_template") || config["chat_template"].is_null())
      return std::nullopt;
    return template_from_tokenizer_config(text, path.string());
  };
  if (auto source = from_json("tokenizer_config.json")) return source;
  const fs::path jinja = fs::path(folder) / "chat_template.jinja";
  if (fs::is_regular_file(jinja, ec)) return read_file(jinja.string());
  return from_json("chat_template.json");
}

std::optional<std::string> chat_template_from_gguf(const GgufFile& file) {
  const GgufValue* value = file.metadata().find("tokenizer.chat_template");
  if (!value || value->type() != GgufType::String) return std::nullopt;
  return value->as_string();
}

}  // namespace synapse::chat
