#include "llama_loader.h"

#include <dlfcn.h>

#include <cstdlib>

#include "peer_error.h"

namespace synapse::peer {
namespace {

// File names in the pinned package, in dependency order. libllama's RUNPATH
// is $ORIGIN, and loading each by full path first makes the order explicit.
constexpr const char* kGgmlBase = "libggml-base.so";
constexpr const char* kGgml = "libggml.v0.5.0.so";
constexpr const char* kLlama = "libllama.v0.5.0.so";

std::string install_hint(const std::filesystem::path& dir) {
  // install.sh DEST puts the libraries in DEST/lib.
  std::filesystem::path dest = dir.filename() == "lib" ? dir.parent_path() : dir;
  return "run bench/peer/install.sh " + dest.string();
}

void* open_library(const std::filesystem::path& dir, const char* name) {
  const std::filesystem::path path = dir / name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw PeerError(kExitNoLibrary, "llama.cpp peer library not found in " + dir.string() + " (" +
                                        install_hint(dir) + ")");
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw PeerError(kExitNoLibrary, "cannot load " + path.string() + ": " + dlerror() + " (" +
                                        install_hint(dir) + ")");
  }
  return handle;
}

// Resolves `symbol` into `fn`, whose type is the declaration in llama_api.h.
template <typename Fn>
void bind(void* library, const char* library_name, const char* symbol, Fn& fn) {
  void* address = dlsym(library, symbol);
  if (address == nullptr) {
    throw PeerError(kExitNoLibrary, std::string(library_name) + " has no symbol " + symbol +
                                        ": not the pinned llama.cpp version (reinstall with "
                                        "bench/peer/install.sh)");
  }
  fn = reinterpret_cast<Fn>(address);
}

void load_cpu_variant(const LlamaApi& api, const std::filesystem::path& dir,
                      const std::string& variant) {
  const std::filesystem::path path = dir / ("libggml-cpu-" + variant + ".so");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw PeerError(kExitUsage, "no CPU backend variant '" + variant + "' in " + dir.string() +
                                    " (the libggml-cpu-<variant>.so files there name them)");
  }
  if (api.backend_load(path.c_str()) == nullptr) {
    throw PeerError(kExitFailed, "CPU backend variant '" + variant +
                                     "' does not load on this machine (run with -v for why)");
  }
}

void drop_log(int32_t /*level*/, const char* /*text*/, void* /*user_data*/) {}

}  // namespace

std::filesystem::path resolve_lib_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("SYNAPSE_PEER_LIB"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return SYNAPSE_PEER_DEFAULT_LIB_REL;  // relative to the working directory then
  return (exe.parent_path() / SYNAPSE_PEER_DEFAULT_LIB_REL).lexically_normal();
}

LlamaApi load_llama_api(const std::filesystem::path& dir) {
  void* base = open_library(dir, kGgmlBase);
  void* ggml = open_library(dir, kGgml);
  void* llama = open_library(dir, kLlama);

  LlamaApi api{};
  bind(llama, kLlama, "llama_model_default_params", api.model_default_params);
  bind(llama, kLlama, "llama_context_default_params", api.context_default_params);
  bind(llama, kLlama, "llama_backend_init", api.backend_init);
  bind(llama, kLlama, "llama_log_set", api.log_set);
  bind(llama, kLlama, "llama_print_system_info", api.print_system_info);
  bind(llama, kLlama, "llama_model_load_from_file", api.model_load_from_file);
  bind(llama, kLlama, "llama_model_free", api.model_free);
  bind(llama, kLlama, "llama_model_get_vocab", api.model_get_vocab);
  bind(llama, kLlama, "llama_vocab_n_tokens", api.vocab_n_tokens);
  bind(llama, kLlama, "llama_vocab_bos", api.vocab_bos);
  bind(llama, kLlama, "llama_vocab_get_add_bos", api.vocab_get_add_bos);
  bind(llama, kLlama, "llama_init_from_model", api.init_from_model);
  bind(llama, kLlama, "llama_free", api.free);
  bind(llama, kLlama, "llama_batch_init", api.batch_init);
  bind(llama, kLlama, "llama_batch_free", api.batch_free);
  bind(llama, kLlama, "llama_decode", api.decode);
  bind(llama, kLlama, "llama_synchronize", api.synchronize);
  bind(llama, kLlama, "llama_get_logits_ith", api.get_logits_ith);
  bind(llama, kLlama, "llama_get_memory", api.get_memory);
  bind(llama, kLlama, "llama_memory_clear", api.memory_clear);
  bind(llama, kLlama, "llama_tokenize", api.tokenize);
  bind(llama, kLlama, "llama_model_quantize_default_params", api.model_quantize_default_params);
  bind(llama, kLlama, "llama_model_quantize", api.model_quantize);
  bind(ggml, kGgml, "ggml_backend_load_all_from_path", api.backend_load_all_from_path);
  bind(ggml, kGgml, "ggml_backend_load", api.backend_load);
  bind(ggml, kGgml, "ggml_backend_dev_count", api.backend_dev_count);
  bind(base, kGgmlBase, "ggml_get_type_traits", api.get_type_traits);
  return api;
}

LlamaApi start_llama(const std::filesystem::path& dir, const std::string& cpu_variant,
                     bool verbose) {
  LlamaApi api = load_llama_api(dir);
  // llama_log_set also routes ggml's log, so this covers backend loading too.
  if (!verbose) api.log_set(drop_log, nullptr);
  if (cpu_variant.empty()) {
    api.backend_load_all_from_path(dir.c_str());
  } else {
    load_cpu_variant(api, dir, cpu_variant);
  }
  if (api.backend_dev_count() == 0) {
    throw PeerError(kExitNoLibrary, "no ggml CPU backend could be loaded from " + dir.string() +
                                        " (" + install_hint(dir) + ")");
  }
  api.backend_init();
  return api;
}

}  // namespace synapse::peer
