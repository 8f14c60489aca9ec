// Chat templates: renders a conversation into the prompt text a model was
// trained on, using the Jinja template Hugging Face ships with the model
// (tokenizer_config.json "chat_template" or GGUF "tokenizer.chat_template").
// The interpreter implements the Jinja subset real chat templates use and
// renders them byte for byte as transformers does (trim_blocks and
// lstrip_blocks on).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace synapse {
class GgufFile;
}

namespace synapse::chat {

struct ChatMessage {
  std::string role;
  std::string content;
};

struct RenderOptions {
  bool add_generation_prompt = true;
  std::string bos_token;  // from the vocabulary, e.g. "<s>"
  std::string eos_token;
  // What strftime_now() sees as "now", as "YYYY-MM-DD"; empty means the
  // current UTC date. Tests fix it so renders are deterministic.
  std::string fixed_date;
};

namespace jinja {
struct Template;
}

class ChatTemplate {
 public:
  // Parses Jinja source; throws synapse::Error naming the construct and line
  // for syntax it does not support.
  static ChatTemplate parse(std::string_view source);
  // Renders messages; throws synapse::Error for raise_exception() and
  // runtime errors (the message says why).
  std::string render(std::span<const ChatMessage> messages, const RenderOptions& options) const;

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

 private:
  explicit ChatTemplate(std::shared_ptr<const jinja::Template> parsed);
  std::shared_ptr<const jinja::Template> parsed_;
};

// Names accepted by --chat-template NAME: "chatml", "llama2", "llama3",
// "llama3.2", "mistral", "qwen2.5", "qwen3", "smollm2", "tinyllama", "olmoe"
// -> template source; nullopt for an unknown name.
std::optional<std::string> builtin_chat_template(std::string_view name);

// --chat-template NAME|FILE: a builtin name, else the path of a file holding
// Jinja source (or a tokenizer_config.json whose "chat_template" it reads).
// Throws synapse::Error when neither.
std::string resolve_chat_template(std::string_view name_or_file);

// A Hugging Face model folder's chat template, where gguf-py looks for it:
// "chat_template" in tokenizer_config.json (a string, or the list's
// "default" entry; null is none), else chat_template.jinja, else
// chat_template.json.
std::optional<std::string> chat_template_from_hf_folder(const std::string& folder);

// The GGUF's "tokenizer.chat_template" metadata, if present (and a string).
std::optional<std::string> chat_template_from_gguf(const GgufFile& file);

}  // namespace synapse::chat
