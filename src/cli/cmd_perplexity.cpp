// synapse perplexity -m FILE -f TEXT [-c 512] [-b 512] [--chunks K]
//   [--kl-divergence-base FILE [--kl-divergence]]: llama-perplexity's
// protocol (eval/perplexity.h) through the region scheduler.
#include <memory>

#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/layer_drop_flag.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/session_evaluator.h"
#include "eval/perplexity_tool.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct PerplexityFlags {
  std::string model;
  eval::PerplexityToolOptions tool;
  ChunkFlags chunks;  // -c, -b, --chunks
  KernelFlags kernels;
  MemoryFlags memory;
  std::string drop_layers;
};

int perplexity(const PerplexityFlags& f) {
  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  const Vocabulary& vocab = tokenizer->vocabulary();
  eval::PerplexityEngine engine;
  // As llama-perplexity: BOS where the vocabulary adds it, special tokens
  // not matched in the text.
  engine.tokenize = [&](const std::string& text) { return tokenizer->encode(text, true, false); };
  if (vocab.add_bos && vocab.bos_id) engine.bos = vocab.bos_id;
  engine.open = [&](int64_t n_ctx) -> std::unique_ptr<eval::ChunkEvaluator> {
    return open_evaluator(path, n_ctx, f.chunks.batch, f.kernels, f.memory, f.drop_layers);
  };
  eval::PerplexityToolOptions tool = f.tool;
  tool.n_ctx = f.chunks.n_ctx;
  tool.max_chunks = f.chunks.max_chunks;
  eval::run_perplexity_tool(tool, engine);
  return kExitOk;
}

Register perplexity_reg{{"perplexity", "Perplexity of a text (llama-perplexity's protocol), or KL divergence against a reference",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<PerplexityFlags>();
                app.add_option("-m,--model", f->model, "model file (GGUF), or a folder holding one")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("-f,--file", f->tool.text_file, "text to score")->check(CLI::ExistingFile);
                add_chunk_flags(app, f->chunks);
                app.add_option("--kl-divergence-base", f->tool.kl_base,
                               "save the scored rows' log-probabilities to FILE (with --kl-divergence: compare with it)");
                app.add_flag("--kl-divergence", f->tool.kl,
                             "compare with the reference of --kl-divergence-base (its tokens; no -f)");
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                add_drop_layers_flag(app, f->drop_layers);
                app.footer(
                    "\nExamples:\n"
                    "  synapse perplexity -m model.gguf -f wiki.test.raw\n"
                    "  synapse perplexity -m model-f16.gguf -f text.txt --kl-divergence-base ref.kld\n"
                    "  synapse perplexity -m model-q4_0.gguf --kl-divergence-base ref.kld --kl-divergence\n"
                    "\nExit codes: 0 ok, 1 bad model, text or reference file, 2 bad flags, 3 over the memory budget.\n");
                return [f] { return perplexity(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli
