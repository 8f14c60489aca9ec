// The chat template a command uses: --chat-template NAME|FILE, else the
// GGUF's own (tokenizer.chat_template), else ChatML (llama.cpp's fallback
// too), said on stderr.
#pragma once

#include <string>

namespace synapse::cli {

std::string chat_template_source(const std::string& flag, const std::string& model_path, const char* command);

}  // namespace synapse::cli
