// synapse sensitivity -m MODEL -f TEXT [--types q4_0,q4_k,...] [--layers]
//   [-o table.json]: per precision group (each layer's attention and MLP or
// experts, the embedding, the output head), the mean KL divergence from the
// model as it is and the perplexity when only that group is re-encoded to
// each type; with --layers, the same for dropping each layer. The table
// (-o) is what `synapse quantize --target-bytes` chooses a profile from.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "calibrate/sensitivity.h"
#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/session_evaluator.h"
#include "eval/perplexity_tool.h"
#include "quantize/quant_types.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct SensitivityFlags {
  std::string model;
  std::string text_file;
  std::string output;
  std::vector<std::string> types{"q4_0", "q4_k", "q5_k", "q6_k", "q8_0"};
  bool layers = false;
  ChunkFlags chunks;
  KernelFlags kernels;
  MemoryFlags memory;
};

std::vector<Encoding> candidate_types(const std::vector<std::string>& names) {
  std::vector<Encoding> types;
  for (const std::string& name : names) {
    if (name == "none") continue;
    const std::optional<Encoding> e = encoding_from_name(name);
    const bool weight_type = e && encoding_info(*e).has_codec &&
                             (*e == Encoding::F16 || *e == Encoding::BF16 || quant::is_block_encoding(*e));
    if (!weight_type)
      throw Error(ErrorKind::Usage, "--types: '" + name + "' is not a weight type (f16, bf16, q8_0, q4_0, q4_k, ...)");
    types.push_back(*e);
  }
  return types;
}

int sensitivity(const SensitivityFlags& f) {
  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  const Vocabulary& vocab = tokenizer->vocabulary();
  calibrate::SensitivityRun run;
  run.types = candidate_types(f.types);
  run.layers = f.layers;
  if (run.types.empty() && !run.layers) throw Error(ErrorKind::Usage, "nothing to measure: no --types and no --layers");
  // As llama-perplexity: BOS where the vocabulary adds it, special tokens not matched in the text.
  const std::vector<int32_t> tokens = tokenizer->encode(eval::read_text_file(f.text_file), true, false);
  run.tokens = tokens;
  run.layout = eval::chunk_layout(static_cast<int64_t>(tokens.size()), f.chunks.n_ctx, f.chunks.max_chunks);
  if (vocab.add_bos && vocab.bos_id) run.bos = vocab.bos_id;
  const Model model = load_for_chunks(path, run.layout.n_ctx, f.chunks.batch);
  run.session = evaluator_options(model, f.kernels, f.memory);
  run.scratch_dir = std::filesystem::temp_directory_path().string();

  const calibrate::SensitivityTable table = calibrate::measure_sensitivity(model, path, run);
  std::fputs(calibrate::sensitivity_markdown(table).c_str(), stdout);
  if (!f.output.empty()) {
    const std::string part = f.output + ".part";
    {
      std::ofstream out(part);
      out << calibrate::to_json(table).dump(1) << "\n";
      if (!out) throw Error(ErrorKind::Io, "cannot write " + part);
    }
    std::filesystem::rename(part, f.output);
    std::fprintf(stderr, "sensitivity: wrote %s\n", f.output.c_str());
  }
  return kExitOk;
}

Register sensitivity_reg{{"sensitivity", "How much each region's precision (and each layer) matters: KL and perplexity per type",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<SensitivityFlags>();
                app.add_option("-m,--model", f->model, "model file (GGUF, best unquantized: F16/BF16/F32)")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("-f,--file", f->text_file, "text to measure over")->required()->check(CLI::ExistingFile);
                app.add_option("-o,--output", f->output, "write the table as JSON (for quantize --target-bytes)");
                app.add_option("--types", f->types, "candidate types per group, comma list ('none': groups not measured)")
                    ->delimiter(',')
                    ->capture_default_str();
                app.add_flag("--layers", f->layers, "also measure dropping each layer (--drop-layers)");
                add_chunk_flags(app, f->chunks);
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                app.footer(
                    "\nExamples:\n"
                    "  synapse sensitivity -m model-f16.gguf -f text.txt -o table.json\n"
                    "  synapse sensitivity -m model-f16.gguf -f text.txt --types none --layers\n"
                    "  synapse quantize model-f16.gguf out.gguf q4_k_m --target-bytes 700M --sensitivity table.json\n"
                    "\nExit codes: 0 ok, 1 bad model or text, 2 bad flags, 3 over the memory budget.\n");
                return [f] { return sensitivity(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli
