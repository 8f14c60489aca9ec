// llama2.c checkpoints (karpathy/llama2.c run.c): a header of seven int32
// and float32 weight arrays, mapped in place under llama.cpp's tensor names so
// the dense builder reads them like a GGUF llama model.
#pragma once

#include <string>

#include "model/model.h"

namespace synapse {

// Throws Truncated when the file is shorter than its header declares,
// InvalidValue for an inconsistent header, Overflow for sizes that overflow.
Model load_llama2c_model(const std::string& path, const LoadOptions& options);

}  // namespace synapse
