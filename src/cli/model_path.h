// Where a command's model comes from: -m FILE, or -m FOLDER holding exactly
// one GGUF model (a download folder), or a Hugging Face model folder
// (config.json and safetensors) with no GGUF in it.
#pragma once

#include <string>
#include <vector>

namespace synapse::cli {

// `file_or_folder` itself when it is not a folder; else the one GGUF model
// file in it, or the folder itself when it is a Hugging Face model without
// GGUF files. Throws Error(Usage) when the folder holds no model, or several
// GGUF models (listing them).
std::string model_file_path(const std::string& file_or_folder);

// Whether `path` is a regular file (symlinks followed) that starts with the
// GGUF magic and holds a model, not a multimodal projector ("clip") or a
// later part of a split file.
bool is_gguf_model(const std::string& path);

// The GGUF models directly in `folder` (not its subfolders), sorted.
std::vector<std::string> gguf_models_in(const std::string& folder);

}  // namespace synapse::cli
