// load_model: picks the importer: a Hugging Face folder (or one of its
// .safetensors files), else by the file's first bytes.
#include <cstring>
#include <filesystem>

#include "format/gguf.h"
#include "format/mapped_file.h"
#include "model/gguf_import.h"
#include "model/hf_import.h"
#include "model/llama2c_import.h"
#include "model/model.h"

namespace synapse {

Model load_model(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors")) return load_hf_model(path, options);
  uint32_t magic = 0;
  {
    const MappedFile file(path);
    if (file.bytes().size() >= sizeof magic) std::memcpy(&magic, file.bytes().data(), sizeof magic);
  }
  // llama2.c checkpoints have no magic; anything that is not GGUF is read as
  // one, and its header checks reject files that are neither.
  return magic == kGgufMagic ? load_gguf_model(path, options) : load_llama2c_model(path, options);
}

}  // namespace synapse
