#include "cli/quantize_at_load.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "convert/hf_to_gguf.h"
#include "model/hf_import.h"
#include "quantize/quant_types.h"
#include "quantize/quantize_model.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

// A private folder (mkdtemp: mode 0700, a fresh name) for the converted file
// and the converter's own temporaries, removed with all it holds when this
// goes.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "synapse-quantized-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error(ErrorKind::Io, std::string("cannot create a temporary folder: ") + std::strerror(errno),
                  Error::kNoOffset, pattern);
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

}  // namespace

Model load_model_quantized(const std::string& path, const std::string& type, const std::string& tokenizer,
                           const LoadOptions& load) {
  if (type.empty()) return load_model(path, load);
  const quant::QuantType* quantized = quant::find_quant_type(type);
  if (!quantized) throw Error(ErrorKind::Usage, "--quantize '" + type + "' is not a quantize type (q8_0, q4_k_m, ...)");
  const TemporaryFolder folder;
  const std::string file = folder.file("model.gguf");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors")) {
    convert::ConvertOptions options;
    options.input = path;
    options.output = file;
    options.type = type;
    options.tokenizer = tokenizer;
    convert::convert_hf_to_gguf(options);
  } else {
    quant::QuantizeOptions options;
    options.input = path;
    options.output = file;
    options.type = quantized;
    quant::quantize_model(options);
  }
  return load_model(file, load);  // the mapping keeps the removed file's bytes
}

}  // namespace synapse::cli
