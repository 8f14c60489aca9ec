#include "cli/chat_template_flag.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "chat/chat_template.h"
#include "format/gguf_reader.h"

namespace synapse::cli {

std::string chat_template_source(const std::string& flag, const std::string& model_path, const char* command) {
  if (!flag.empty()) return chat::resolve_chat_template(flag);
  std::error_code ec;
  const bool hf = std::filesystem::is_directory(model_path, ec) || model_path.ends_with(".safetensors");
  const std::string folder = std::filesystem::is_directory(model_path, ec)
                                 ? model_path
                                 : std::filesystem::path(model_path).parent_path().string();
  if (std::optional<std::string> source = hf ? chat::chat_template_from_hf_folder(folder)
                                             : chat::chat_template_from_gguf(GgufFile::open(model_path)))
    return *source;
  std::fprintf(stderr,
               "synapse %s: the model has no chat template (tokenizer.chat_template); using chatml "
               "(--chat-template NAME|FILE picks another)\n",
               command);
  return *chat::builtin_chat_template("chatml");
}

}  // namespace synapse::cli
