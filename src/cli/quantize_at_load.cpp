#include "cli/quantize_at_load.h"

#include <stdlib.h>
#include <unistd.h>

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

// A fresh file name in the temporary folder, removed when this goes.
class TemporaryGguf {
 public:
  TemporaryGguf() {
    std::string pattern = (std::filesystem::temp_directory_path() / "synapse-quantized-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      throw Error(ErrorKind::Io, std::string("cannot create a temporary file: ") + std::strerror(errno),
                  Error::kNoOffset, pattern);
    ::close(fd);
    path_ = pattern;
  }
  ~TemporaryGguf() { ::unlink(path_.c_str()); }
  TemporaryGguf(const TemporaryGguf&) = delete;
  TemporaryGguf& operator=(const TemporaryGguf&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

Model load_model_quantized(const std::string& path, const std::string& type, const std::string& tokenizer,
                           const LoadOptions& load) {
  if (type.empty()) return load_model(path, load);
  const quant::QuantType* quantized = quant::find_quant_type(type);
  if (!quantized) throw Error(ErrorKind::Usage, "--quantize '" + type + "' is not a quantize type (q8_0, q4_k_m, ...)");
  const TemporaryGguf file;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors")) {
    convert::ConvertOptions options;
    options.input = path;
    options.output = file.path();
    options.type = type;
    options.tokenizer = tokenizer;
    convert::convert_hf_to_gguf(options);
  } else {
    quant::QuantizeOptions options;
    options.input = path;
    options.output = file.path();
    options.type = quantized;
    quant::quantize_model(options);
  }
  return load_model(file.path(), load);  // the mapping keeps the unlinked file's bytes
}

}  // namespace synapse::cli
