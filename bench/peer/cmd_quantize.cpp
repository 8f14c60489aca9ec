// quantize IN OUT TYPE [-t N] [--allow-requantize] [--pure]: llama.cpp's own quantizer
// (llama_model_quantize with its default parameters: no imatrix, the type
// mix of the file type), to compare `synapse quantize` with byte for byte.
// TYPE takes synapse quantize's names (src/quantize/quant_types.h), so both
// mean the same llama_ftype.
#include <filesystem>
#include <memory>

#include "peer_commands.h"
#include "peer_error.h"
#include "quantize/quant_types.h"

namespace synapse::peer {
namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type;
  int threads = 1;
  bool allow_requantize = false;
  bool pure = false;
};

int run_quantize(const QuantizeArgs& args, const PeerOptions& options) {
  const quant::QuantType* type = quant::find_quant_type(args.type);
  if (type == nullptr) throw PeerError(kExitUsage, "unknown type '" + args.type + "'");
  const LlamaApi api = start_peer(options);
  llama_model_quantize_params params = api.model_quantize_default_params();
  params.nthread = args.threads;
  params.ftype = static_cast<int32_t>(type->file_type);
  params.allow_requantize = args.allow_requantize;
  params.pure = args.pure;
  if (api.model_quantize(args.input.c_str(), args.output.c_str(), &params) != 0) {
    // llama.cpp may have written part of the file.
    std::error_code ignored;
    std::filesystem::remove(args.output, ignored);
    throw PeerError(kExitFailed, "llama_model_quantize failed on " + args.input + " (-v shows why)");
  }
  return kExitOk;
}

}  // namespace

Action setup_quantize(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<QuantizeArgs>();
  sub.add_option("input", args->input, "GGUF file to read")->required();
  sub.add_option("output", args->output, "GGUF file to write")->required();
  sub.add_option("type", args->type, "file type, as synapse quantize names it (q8_0, q4_k_m, ...)")->required();
  sub.add_option("-t,--threads", args->threads, "threads (default 1)");
  sub.add_flag("--allow-requantize", args->allow_requantize, "re-encode quantized tensors");
  sub.add_flag("--pure", args->pure, "no type mix (llama-quantize --pure)");
  return [args, &options] { return run_quantize(*args, options); };
}

}  // namespace synapse::peer
