// Hugging Face tensor names (transformers' module paths) to llama.cpp's GGUF
// names, as gguf-py's tensor_mapping.py maps them for the families
// hf_config.h reads. Routed experts are stored one tensor per expert in HF
// and merged in GGUF; they map to "NAME[e]", the name of expert e's view of
// the merged tensor (moe_builder.h's expert_view), so the graph builder reads
// them without a merge.
#pragma once

#include <optional>
#include <string>

namespace synapse {

// The GGUF name, "" for a tensor the converter drops (rotary inv_freq
// buffers), nullopt for a name with no GGUF counterpart.
std::optional<std::string> gguf_name_of_hf_tensor(const std::string& hf_name);

}  // namespace synapse
