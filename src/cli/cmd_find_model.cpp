// synapse find-model: the model a command would use when none is given:
// $SYNAPSE_MODEL, else the first GGUF model in the caches other tools
// download into (llama.cpp, Hugging Face, Ollama), else the first Hugging
// Face snapshot folder (config.json and safetensors) of a family we run. Prints its path on
// stdout and where it was found on stderr; exits 1 when there is none.
// scripts/run.sh asks it before synthesizing a random-weight model.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_path.h"
#include "model/hf_config.h"
#include "model/hf_import.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

namespace fs = std::filesystem;

struct Cache {
  std::string name;  // what the user calls it
  fs::path folder;
  bool any_name;     // Ollama's blobs have no .gguf suffix: the magic decides
  bool snapshots = false;  // Hugging Face's models--*/snapshots/* folders
};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Each tool's own variables first, then its default under $HOME.
std::vector<Cache> caches() {
  const fs::path home = env("HOME");
  const fs::path xdg_cache = env("XDG_CACHE_HOME").empty() ? home / ".cache" : fs::path(env("XDG_CACHE_HOME"));
  fs::path llama = env("LLAMA_CACHE").empty() ? xdg_cache / "llama.cpp" : fs::path(env("LLAMA_CACHE"));
  fs::path hf = !env("HF_HUB_CACHE").empty() ? fs::path(env("HF_HUB_CACHE"))
                : !env("HF_HOME").empty()    ? fs::path(env("HF_HOME")) / "hub"
                                             : xdg_cache / "huggingface" / "hub";
  fs::path ollama = env("OLLAMA_MODELS").empty() ? home / ".ollama" / "models" : fs::path(env("OLLAMA_MODELS"));
  return {{"the llama.cpp cache", llama, false},
          {"the Hugging Face cache", hf, false, true},
          {"the Ollama store", ollama / "blobs", true}};
}

// A cache's GGUF models, sorted by path. Hugging Face snapshot entries are
// symlinks into blobs/: is_gguf_model follows them.
std::vector<std::string> models_in(const Cache& cache) {
  std::vector<std::string> candidates;
  std::error_code ec;
  if (!fs::is_directory(cache.folder, ec)) return {};
  for (auto it = fs::recursive_directory_iterator(cache.folder, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (cache.any_name || it->path().extension() == ".gguf") candidates.push_back(it->path().string());
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<std::string> models;
  for (const std::string& path : candidates)
    if (is_gguf_model(path)) models.push_back(path);
  return models;
}

// The cache's Hugging Face snapshot folders whose config.json we read,
// sorted: models after the GGUF files, which load faster.
std::vector<std::string> hf_folders_in(const Cache& cache) {
  std::vector<std::string> folders;
  std::error_code ec;
  for (const fs::directory_entry& repo : fs::directory_iterator(cache.folder, ec)) {
    for (const fs::directory_entry& snapshot : fs::directory_iterator(repo.path() / "snapshots", ec)) {
      const std::string path = snapshot.path().string();
      if (!is_hf_folder(path)) continue;
      try {
        std::ifstream in(snapshot.path() / "config.json");
        const std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        parse_hf_config(config, path);
        folders.push_back(path);
      } catch (const Error&) {  // not a family we run: not a candidate
      }
    }
    ec.clear();
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

int find_model(bool all) {
  if (const std::string chosen = env("SYNAPSE_MODEL"); !chosen.empty()) {
    if (!fs::exists(chosen)) throw Error(ErrorKind::Usage, "$SYNAPSE_MODEL names " + chosen + ", which does not exist");
    std::printf("%s\n", model_file_path(chosen).c_str());
    std::fprintf(stderr, "synapse find-model: from $SYNAPSE_MODEL\n");
    return kExitOk;
  }
  std::string searched;
  bool found = false;
  for (const Cache& cache : caches()) {
    for (const std::string& path : models_in(cache)) {
      std::printf("%s\n", path.c_str());
      if (!found) std::fprintf(stderr, "synapse find-model: found in %s (%s)\n", cache.name.c_str(),
                               cache.folder.string().c_str());
      found = true;
      if (!all) return kExitOk;
    }
    searched += "\n  " + cache.folder.string();
  }
  for (const Cache& cache : caches()) {
    if (!cache.snapshots) continue;
    for (const std::string& path : hf_folders_in(cache)) {
      std::printf("%s\n", path.c_str());
      if (!found) std::fprintf(stderr, "synapse find-model: a Hugging Face folder in %s\n", cache.name.c_str());
      found = true;
      if (!all) return kExitOk;
    }
  }
  if (found) return kExitOk;
  std::fprintf(stderr, "synapse find-model: no GGUF model in $SYNAPSE_MODEL nor in:%s\n", searched.c_str());
  return kExitError;
}

Register find_model_reg{{"find-model", "Print the path of a GGUF model found in $SYNAPSE_MODEL or the usual download caches",
              [](CLI::App& app) -> std::function<int()> {
                auto all = std::make_shared<bool>(false);
                app.add_flag("--all", *all, "list every model found, not only the first");
                app.footer(
                    "\nSearched in order: $SYNAPSE_MODEL (a file, or a folder holding one GGUF), the llama.cpp\n"
                    "cache ($LLAMA_CACHE or ~/.cache/llama.cpp), the Hugging Face cache ($HF_HUB_CACHE,\n"
                    "$HF_HOME/hub or ~/.cache/huggingface/hub) and Ollama's blobs ($OLLAMA_MODELS or\n"
                    "~/.ollama/models); then the Hugging Face cache's snapshot folders (config.json and\n"
                    "safetensors) of a family Synapse runs.\n\nExamples:\n"
                    "  synapse find-model\n"
                    "  synapse find-model --all\n"
                    "  synapse run -m \"$(synapse find-model)\" -p \"Hello\" -n 32\n");
                return [all] { return find_model(*all); };
              }}};

}  // namespace
}  // namespace synapse::cli
