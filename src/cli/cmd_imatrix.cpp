// synapse imatrix -m FILE -f TEXT [-o imatrix.gguf] [-c 512] [-b 512]
//   [--chunks K] [--process-output]: activation statistics for
// importance-weighted quantization (synapse quantize --imatrix), in
// llama-imatrix's GGUF format. The text is walked in llama-perplexity's
// chunks (eval/perplexity.h), whose perplexity is printed as it goes.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/model_path.h"
#include "cli/session_evaluator.h"
#include "calibrate/imatrix_collector.h"
#include "eval/perplexity_tool.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct ImatrixFlags {
  std::string model;
  std::string text_file;
  std::string output = "imatrix.gguf";
  ChunkFlags chunks;
  bool process_output = false;
  KernelFlags kernels;
  MemoryFlags memory;
};

int imatrix(const ImatrixFlags& f) {
  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  const Vocabulary& vocab = tokenizer->vocabulary();
  // As llama-imatrix: BOS where the vocabulary adds it, special tokens not
  // matched in the text, each chunk's first token replaced by BOS.
  const std::vector<int32_t> tokens = tokenizer->encode(eval::read_text_file(f.text_file), true, false);
  std::optional<int32_t> bos;
  if (vocab.add_bos && vocab.bos_id) bos = vocab.bos_id;
  const eval::ChunkLayout layout = eval::chunk_layout(static_cast<int64_t>(tokens.size()), f.chunks.n_ctx, f.chunks.max_chunks);
  std::fprintf(stderr, "imatrix: %zu tokens, %lld chunks of %lld\n", tokens.size(),
               static_cast<long long>(layout.n_chunks), static_cast<long long>(layout.n_ctx));

  const std::unique_ptr<calibrate::SessionEvaluator> evaluator =
      open_evaluator(path, layout.n_ctx, f.chunks.batch, f.kernels, f.memory);
  calibrate::ImatrixCollector collector(evaluator->model().graph, f.process_output);
  evaluator->session().scheduler().set_listener(
      [&collector](const exec::RegionEvent& e, std::span<const exec::TensorRef> values) { collector.observe(e, values); });
  const eval::NllSums nll = eval::perplexity(*evaluator, tokens, layout, bos, eval::chunk_printer("imatrix"));
  eval::print_final_estimate(nll);

  const quant::Imatrix result = collector.result({f.text_file}, static_cast<uint32_t>(layout.n_chunks),
                                                 static_cast<uint32_t>(layout.n_ctx));
  quant::write_imatrix(result, f.output);
  std::fprintf(stderr, "imatrix: saved %zu entries from %lld chunks to %s\n", result.entries.size(),
               static_cast<long long>(layout.n_chunks), f.output.c_str());
  return kExitOk;
}

Register imatrix_reg{{"imatrix", "Activation statistics of a text for importance-weighted quantization (llama-imatrix's format)",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<ImatrixFlags>();
                app.add_option("-m,--model", f->model, "model file (GGUF), or a folder holding one")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("-f,--file", f->text_file, "text to collect statistics over")
                    ->required()
                    ->check(CLI::ExistingFile);
                app.add_option("-o,--output-file", f->output, "where to write the imatrix (GGUF)")->capture_default_str();
                add_chunk_flags(app, f->chunks);
                app.add_flag("--process-output", f->process_output, "also collect statistics for output.weight");
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                app.footer(
                    "\nExamples:\n"
                    "  synapse imatrix -m model-f16.gguf -f calibration.txt -o imatrix.gguf\n"
                    "  synapse quantize model-f16.gguf model-q4_k_m.gguf q4_k_m --imatrix imatrix.gguf\n"
                    "\nExit codes: 0 ok, 1 bad model or text, 2 bad flags, 3 over the memory budget.\n");
                return [f] { return imatrix(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli
