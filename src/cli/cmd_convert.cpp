// synapse convert: a Hugging Face model folder (config.json, safetensors, a
// tokenizer) to a GGUF file llama.cpp loads (convert_hf_to_gguf.py's job).
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "convert/hf_to_gguf.h"
#include "kernels/cpu/core_count.h"
#include "progress/progress.h"

namespace synapse::cli {
namespace {

int run_convert(const convert::ConvertOptions& options) {
  convert::ConvertSummary s;
  {
    std::unique_ptr<Progress> progress;  // made once the writer knows the file's size
    s = convert::convert_hf_to_gguf(options, [&progress](uint64_t done, uint64_t total) {
      if (!progress) progress = std::make_unique<Progress>("convert: writing", total);
      progress->update(done);
    });
  }
  std::printf("wrote %s: type %s, %zu tensors, %llu bytes\n", options.output.c_str(), options.type.c_str(), s.tensors,
              static_cast<unsigned long long>(s.bytes));
  return kExitOk;
}

std::function<int()> setup_convert(CLI::App& app) {
  auto options = std::make_shared<convert::ConvertOptions>();
  app.add_option("input", options->input,
                 "Hugging Face model folder (config.json, model.safetensors or sharded with "
                 "model.safetensors.index.json, tokenizer.json or tokenizer.model), or one .safetensors file in it")
      ->required()
      ->check(CLI::ExistingPath);
  app.add_option("-o,--outfile", options->output, "GGUF file to write")->required();
  app.add_option("--type,--outtype", options->type,
                 "source (each matrix as stored), f32, f16, bf16, or a quantize type (q8_0, q4_k_m, ...: "
                 "llama.cpp's per-tensor rules, as `synapse quantize` applies them)")
      ->capture_default_str();
  app.add_option("--tokenizer", options->tokenizer,
                 "tokenizer file (tokenizer.json, tokenizer.model or a GGUF) when the folder has none")
      ->check(CLI::ExistingFile);
  app.add_option("-t,--threads", options->threads, "threads converting rows (default: one per core)")
      ->check(CLI::Range(0, cpu::kMaxThreads));
  app.footer(
      "\nFamilies (config.json model_type): llama (Llama 2/3, SmolLM2, TinyLlama), mistral, mixtral, qwen2,\n"
      "qwen3, olmoe, qwen2_moe, qwen3_moe. Norms and biases are written as F32. The file is written to\n"
      "OUT.part and renamed into place: a failure leaves nothing at OUT.");
  return [options] { return run_convert(*options); };
}

const Register convert_reg{{"convert", "Convert a Hugging Face model folder to GGUF", setup_convert}};

}  // namespace
}  // namespace synapse::cli
