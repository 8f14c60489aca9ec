// Unicode NFC normalization (canonical decomposition, then composition) for
// tokenizers whose normalizer asks for it, such as Qwen's tokenizer.json.
#pragma once

#include <string>
#include <string_view>

namespace synapse {

// The NFC form of `text`. Bytes that are not valid UTF-8 pass through as
// they are, and normalization runs over the valid stretches between them.
std::string nfc_normalize(std::string_view text);

}  // namespace synapse
