// Finds and loads the pinned llama.cpp libraries at run time (dlopen), so the
// harness builds without them and says clearly when they are missing.
#pragma once

#include <filesystem>
#include <string>

#include "llama_api.h"

namespace synapse::peer {

// Where the libraries are looked for: `flag` (--lib) when given, else the
// environment variable SYNAPSE_PEER_LIB, else the default install location
// SYNAPSE_PEER_DEFAULT_LIB_REL relative to this executable's folder, which
// CMake sets to <build>/peer/lib (install.sh <build>/peer puts them there).
std::filesystem::path resolve_lib_dir(const std::string& flag);

// Loads libggml-base, libggml and libllama from `dir` and resolves every
// entry point of LlamaApi. Throws PeerError(kExitNoLibrary) when a library is
// absent or lacks a symbol (wrong version). The libraries stay loaded for the
// life of the process: ggml keeps global backend registries that must not be
// unloaded under it.
LlamaApi load_llama_api(const std::filesystem::path& dir);

// load_llama_api(), then silences llama.cpp's logging unless `verbose`,
// loads the CPU backend and initializes llama.cpp. The CPU backend comes as
// one library per instruction-set level (libggml-cpu-<variant>.so): with an
// empty `cpu_variant` ggml picks the best one this machine supports, else
// exactly that one is loaded (variants round differently, so reproducing
// stored logits bit for bit may need the variant they were made with).
// Throws PeerError when the backend cannot be loaded.
LlamaApi start_llama(const std::filesystem::path& dir, const std::string& cpu_variant,
                     bool verbose);

}  // namespace synapse::peer
