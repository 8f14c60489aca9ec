// dequant FILE TENSOR [-o OUT]: ggml's own conversion of one tensor to
// float32 (ggml_get_type_traits(type)->to_float), written raw, ne[0] fastest,
// to stdout or OUT. The tensor is located with Synapse's GGUF reader, so this
// checks our decoders against ggml's without involving llama.cpp's loader.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "format/gguf_reader.h"
#include "peer_commands.h"
#include "peer_error.h"
#include "peer_output.h"

namespace synapse::peer {
namespace {

// Elements converted per to_float call: bounds memory for large tensors.
constexpr uint64_t kChunkElements = uint64_t{1} << 20;

struct DequantArgs {
  std::string model;
  std::string tensor;
  std::string output = "-";
};

int run_dequant(const DequantArgs& args, const PeerOptions& options) {
  const LlamaApi api = start_peer(options);
  const GgufFile file = GgufFile::open(args.model);
  const GgufTensorInfo* info = file.find_tensor(args.tensor);
  if (info == nullptr) {
    throw PeerError(kExitFailed, "no tensor " + args.tensor + " in " + args.model);
  }

  const auto type = static_cast<int32_t>(info->encoding);
  const ggml_type_traits* traits =
      type >= 0 && type < GGML_TYPE_COUNT ? api.get_type_traits(type) : nullptr;
  if (traits == nullptr || traits->blck_size <= 0 || traits->type_size == 0 ||
      (traits->to_float == nullptr && type != GGML_TYPE_F32)) {
    throw PeerError(kExitFailed, "ggml has no float conversion for type " + std::to_string(type) +
                                     " of tensor " + args.tensor);
  }
  const auto block = static_cast<uint64_t>(traits->blck_size);
  const uint64_t n = info->n_elements();
  const std::span<const uint8_t> data = file.tensor_data(*info);
  if (n % block != 0 || data.size() != n / block * traits->type_size) {
    throw PeerError(kExitFailed, "tensor " + args.tensor + ": " + std::to_string(data.size()) +
                                     " bytes do not hold " + std::to_string(n) + " " +
                                     traits->type_name + " elements");
  }

  OutputFile out(args.output);
  const uint64_t chunk = std::max(block, kChunkElements / block * block);
  std::vector<float> values(static_cast<size_t>(std::min(n, chunk)));
  for (uint64_t first = 0; first < n; first += chunk) {
    const uint64_t count = std::min(chunk, n - first);
    const uint8_t* src = data.data() + first / block * traits->type_size;
    if (traits->to_float != nullptr) {
      traits->to_float(src, values.data(), static_cast<int64_t>(count));
    } else {  // F32: already floats
      std::memcpy(values.data(), src, static_cast<size_t>(count) * sizeof(float));
    }
    out.write(std::span<const float>(values.data(), static_cast<size_t>(count)));
  }
  out.close();
  return kExitOk;
}

}  // namespace

Action setup_dequant(CLI::App& sub, const PeerOptions& options) {
  auto args = std::make_shared<DequantArgs>();
  sub.add_option("file", args->model, "GGUF file")->required();
  sub.add_option("tensor", args->tensor, "tensor name")->required();
  sub.add_option("-o,--output", args->output, "output file (default: stdout)");
  return [args, &options] { return run_dequant(*args, options); };
}

}  // namespace synapse::peer
