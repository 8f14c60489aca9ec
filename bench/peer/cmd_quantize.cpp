// quantize IN OUT TYPE [-t N] [--allow-requantize] [--pure] [--imatrix FILE]
// [--tensor-type PATTERN=TYPE]... [--profile FILE]: llama.cpp's own quantizer
// (llama_model_quantize with its default parameters: the type mix of the
// file type), to compare `synapse quantize` with byte for byte. TYPE takes
// synapse quantize's names (src/quantize/quant_types.h), so both mean the
// same llama_ftype. With --imatrix it gets what llama-quantize passes it:
// each entry's normalised importance and the quantize.imatrix.* keys as
// kv_overrides, made from the file by synapse's reader; the type overrides
// go to tt_overrides as llama-quantize's --tensor-type does, parsed by
// synapse's parser (the parsing is ours; the quantizing llama.cpp's).
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "peer_commands.h"
#include "peer_error.h"
#include "quantize/imatrix_file.h"
#include "quantize/quant_types.h"
#include "quantize/tensor_type_override.h"
#include "synapse/error.h"

namespace synapse::peer {
namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type;
  std::string imatrix;
  std::vector<std::string> tensor_types;
  std::string profile;
  int threads = 1;
  bool allow_requantize = false;
  bool pure = false;
};

// What llama-quantize builds from an imatrix file: the arrays the params
// point into (kept alive here while llama.cpp runs).
struct ImatrixParams {
  std::vector<std::pair<std::string, std::vector<float>>> importance;  // name, values
  std::vector<llama_model_imatrix_data> data;
  std::vector<llama_model_kv_override> overrides;
};

llama_model_kv_override to_override(const std::string& key, const GgufValue& value) {
  llama_model_kv_override o;
  std::memset(&o, 0, sizeof o);
  std::strncpy(o.key, key.c_str(), sizeof o.key - 1);
  if (value.type() == GgufType::String) {
    o.tag = LLAMA_KV_OVERRIDE_TYPE_STR;
    std::strncpy(o.val_str, value.as_string().c_str(), sizeof o.val_str - 1);
  } else {
    o.tag = LLAMA_KV_OVERRIDE_TYPE_INT;  // llama.cpp stores these as uint32
    o.val_i64 = value.as_int();
  }
  return o;
}

// Null when the file has no entry (llama-quantize then passes nothing).
// Throws synapse::Error for a file read_imatrix refuses.
std::unique_ptr<ImatrixParams> imatrix_params(const std::string& path) {
  const quant::Imatrix m = quant::read_imatrix(path);
  if (m.entries.empty()) return nullptr;
  auto p = std::make_unique<ImatrixParams>();
  for (const auto& [name, entry] : m.entries) p->importance.emplace_back(name, quant::importance(entry));
  for (const auto& [name, values] : p->importance) p->data.push_back({name.c_str(), values.data(), values.size()});
  p->data.push_back({nullptr, nullptr, 0});
  for (const auto& [key, value] : quant::imatrix_metadata(m, path)) p->overrides.push_back(to_override(key, value));
  p->overrides.push_back(to_override("", GgufValue(uint32_t{0})));  // an empty key ends the array
  return p;
}

// synapse quantize's overrides. Throws PeerError(usage) for a bad one.
std::vector<quant::TensorTypeOverride> type_overrides(const QuantizeArgs& args) {
  try {
    return quant::overrides_from(args.tensor_types, args.profile);
  } catch (const Error& e) {
    throw PeerError(e.kind() == ErrorKind::Usage ? kExitUsage : kExitFailed, e.what());
  }
}

int run_quantize(const QuantizeArgs& args, const PeerOptions& options) {
  const quant::QuantType* type = quant::find_quant_type(args.type);
  if (type == nullptr) throw PeerError(kExitUsage, "unknown type '" + args.type + "'");
  const std::vector<quant::TensorTypeOverride> overrides = type_overrides(args);
  std::vector<llama_model_tensor_override> tt_overrides;
  for (const quant::TensorTypeOverride& o : overrides)
    tt_overrides.push_back({o.pattern.c_str(), static_cast<int32_t>(o.type)});
  tt_overrides.push_back({nullptr, GGML_TYPE_COUNT});
  std::unique_ptr<ImatrixParams> imatrix;
  if (!args.imatrix.empty()) {
    try {
      imatrix = imatrix_params(args.imatrix);
    } catch (const Error& e) {
      throw PeerError(kExitFailed, e.what());
    }
  }
  const LlamaApi api = start_peer(options);
  llama_model_quantize_params params = api.model_quantize_default_params();
  params.nthread = args.threads;
  params.ftype = static_cast<int32_t>(type->file_type);
  params.allow_requantize = args.allow_requantize;
  params.pure = args.pure;
  if (imatrix) {
    params.imatrix = imatrix->data.data();
    params.kv_overrides = imatrix->overrides.data();
  }
  if (!overrides.empty()) params.tt_overrides = tt_overrides.data();
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
  sub.add_option("--imatrix", args->imatrix, "importance matrix file, passed as llama-quantize passes it");
  sub.add_option("--tensor-type", args->tensor_types,
                 "PATTERN=TYPE, repeatable: tensors whose name PATTERN (a regex) is found in get TYPE "
                 "(llama-quantize --tensor-type)");
  sub.add_option("--profile", args->profile, "file of PATTERN=TYPE lines, after the --tensor-type flags");
  return [args, &options] { return run_quantize(*args, options); };
}

}  // namespace synapse::peer
