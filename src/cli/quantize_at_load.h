// --quantize TYPE: a model re-encoded as it loads. A Hugging Face folder is
// converted (`synapse convert --type TYPE`), a GGUF quantized (`synapse
// quantize`), into a private temporary folder removed once the result is
// mapped, so the model runs as the file those commands would write, and
// nothing is left on disk.
#pragma once

#include <string>

#include "model/model.h"

namespace synapse::cli {

// `type` empty: load_model(path, load). `tokenizer`: the --tokenizer file a
// folder without one needs for the conversion (may be empty). Throws the
// converter's and quantizer's errors, Usage for an unknown type.
Model load_model_quantized(const std::string& path, const std::string& type, const std::string& tokenizer,
                           const LoadOptions& load);

}  // namespace synapse::cli
