#include "cli/model_path.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "format/gguf_reader.h"
#include "model/hf_import.h"
#include "synapse/error.h"

namespace synapse::cli {

namespace fs = std::filesystem;

bool is_gguf_model(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  // Split files ("-00002-of-00003.gguf"): the first part names the model.
  static const std::regex later_part(R"(-(\d{5})-of-\d{5}\.gguf$)");
  std::smatch part;
  const std::string name = fs::path(path).filename().string();
  if (std::regex_search(name, part, later_part) && part[1] != "00001") return false;
  try {  // the reader checks the magic first, so other files fail fast
    const GgufFile file = GgufFile::open(path);
    const GgufValue* arch = file.metadata().find("general.architecture");
    return !(arch && arch->type() == GgufType::String && std::get<std::string>(arch->v) == "clip");
  } catch (const Error&) {
    return false;  // not a file we can read: not a candidate
  }
}

std::vector<std::string> gguf_models_in(const std::string& folder) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() == ".gguf" && is_gguf_model(path)) found.push_back(path);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string model_file_path(const std::string& file_or_folder) {
  std::error_code ec;
  if (!fs::is_directory(file_or_folder, ec)) return file_or_folder;
  const std::vector<std::string> found = gguf_models_in(file_or_folder);
  if (found.size() == 1) return found.front();
  if (found.empty() && is_hf_folder(file_or_folder)) return file_or_folder;
  if (found.empty())
    throw Error(ErrorKind::Usage, "the folder " + file_or_folder +
                                      " holds no GGUF model file and no Hugging Face model (config.json and "
                                      "safetensors); give -m FILE");
  std::string list;
  for (const std::string& path : found) list += "\n  " + path;
  throw Error(ErrorKind::Usage,
              "the folder " + file_or_folder + " holds " + std::to_string(found.size()) +
                  " GGUF model files; pick one with -m FILE:" + list);
}

}  // namespace synapse::cli
