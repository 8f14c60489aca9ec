// synapse quantize: re-encode a GGUF model to another file type with
// llama.cpp's per-tensor rules, optionally weighted by an importance matrix
// (the bytes llama-quantize writes).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "progress/progress.h"
#include "quantize/quant_types.h"
#include "quantize/quantize_model.h"
#include "synth/synth_names.h"

namespace synapse::cli {
namespace {

struct QuantizeArgs {
  quant::QuantizeOptions opts;
  std::string type;
};

int run_quantize(QuantizeArgs args) {
  args.opts.type = quant::find_quant_type(args.type);
  if (args.opts.type == nullptr) synth::throw_unknown("type", args.type, quant::quant_type_names());
  // One line per tensor, as llama-quantize logs them (SYNAPSE_PROGRESS=0: none).
  const ProgressOutput progress = stderr_progress();
  const quant::QuantizeSummary s = quant::quantize_model(args.opts, [&](const quant::TensorDone& t) {
    if (!progress.sink) return;
    char line[512];
    std::snprintf(line, sizeof line, "quantize: [%zu/%zu] %s: %s -> %s%s\n", t.index + 1, t.count, t.name.c_str(),
                  encoding_info(t.from).name, encoding_info(t.to).name, t.weighted ? " (imatrix)" : "");
    progress.sink(line);
  });
  std::printf("wrote %s: type %s (llama_ftype %u), %zu tensors (%zu re-encoded", args.opts.output.c_str(),
              args.opts.type->name, args.opts.type->file_type, s.tensors, s.converted);
  if (!args.opts.imatrix_file.empty()) std::printf(", %zu with the imatrix", s.weighted);
  std::printf("), %llu -> %llu tensor bytes\n", static_cast<unsigned long long>(s.input_bytes),
              static_cast<unsigned long long>(s.output_bytes));
  return kExitOk;
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  app.add_option("input", args->opts.input, "GGUF file to read (F32, F16, BF16, or quantized with "
                                            "--allow-requantize)")
      ->required();
  app.add_option("output", args->opts.output, "GGUF file to write")->required();
  app.add_option("type", args->type,
                 "file type: " + synth::join_names(quant::quant_type_names()) +
                     " (any case; q4_k = Q4_K_S, q5_k = Q5_K_S)")
      ->required();
  app.add_option("-t,--threads", args->opts.threads, "threads encoding rows (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--pure", args->opts.pure,
               "no type mix: every quantizable weight gets TYPE's own encoding (llama-quantize --pure)");
  app.add_option("--imatrix", args->opts.imatrix_file,
                 "importance matrix (llama.cpp's imatrix tool's GGUF or legacy .dat file): weighs the rounding of "
                 "each tensor it has an entry for (llama-quantize --imatrix)");
  app.add_flag("--allow-requantize", args->opts.allow_requantize,
               "re-encode tensors already stored in a quantized encoding (llama-quantize --allow-requantize)");
  app.footer(
      "\nTensors get llama.cpp's type mix for the file type (e.g. Q6_K output, more bits for attn_v and\n"
      "ffn_down in some layers for q4_k_m) and its fallbacks for rows that are not whole blocks; norms,\n"
      "1-D tensors and routers keep their stored type. With --imatrix, q4_0, q4_1, q5_0, q5_1 and the\n"
      "K-quants fit each block's scales weighted by the importance of its columns (q8_0, f16, bf16 ignore\n"
      "it), q4_0 / q5_0 give ffn_down q4_1 / q5_1 in the first eighth of the layers, and the file records\n"
      "quantize.imatrix.* keys. The output is byte for byte llama-quantize's.\n"
      "\nExamples:\n"
      "  synapse quantize model-f16.gguf model-q4_k_m.gguf q4_k_m\n"
      "  synapse quantize model-f32.gguf model-q8_0.gguf Q8_0 -t 8\n"
      "  synapse quantize model-f16.gguf model-q4_k.gguf q4_k --pure   # Q4_K everywhere it fits\n"
      "  synapse quantize model-f16.gguf model-q4_k_m.gguf q4_k_m --imatrix imatrix.gguf\n");
  return [args] { return run_quantize(*args); };
}

Register reg{{"quantize", "re-encode a GGUF model to another type with llama.cpp's per-tensor rules", setup}};

}  // namespace
}  // namespace synapse::cli
