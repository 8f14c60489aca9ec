// Where a command's model comes from: -m FILE, or -m FOLDER holding exactly
// one GGUF model (a Hugging Face snapshot, a download folder).
#pragma once

#include <string>
#include <vector>

namespace synapse::cli {

// `file_or_folder` itself when it is not a folder; else the one GGUF model
// file in it. Throws Error(Usage) when the folder holds none or several
// (listing them).
std::string model_file_path(const std::string& file_or_folder);

// Whether `path` is a regular file (symlinks followed) that starts with the
// GGUF magic and holds a model, not a multimodal projector ("clip") or a
// later part of a split file.
bool is_gguf_model(const std::string& path);

// The GGUF models directly in `folder` (not its subfolders), sorted.
std::vector<std::string> gguf_models_in(const std::string& folder);

}  // namespace synapse::cli
