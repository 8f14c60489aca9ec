#include "cli/session_evaluator.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/layer_drop_flag.h"

namespace synapse::cli {

void add_chunk_flags(CLI::App& app, ChunkFlags& flags) {
  app.add_option("-c,--ctx-size", flags.n_ctx, "tokens per chunk; the second half of each is scored")
      ->capture_default_str()
      ->check(CLI::Range(4, 1 << 20));
  app.add_option("-b,--batch-size", flags.batch, "most tokens per evaluation step")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--chunks", flags.max_chunks, "use at most this many chunks (default: all)")
      ->check(CLI::NonNegativeNumber);
}

Model load_for_chunks(const std::string& path, int64_t n_ctx, int64_t batch) {
  return load_model(path, {.max_ctx = static_cast<uint32_t>(n_ctx), .chunk = static_cast<uint32_t>(std::min(batch, n_ctx))});
}

exec::SessionOptions evaluator_options(const Model& model, const KernelFlags& kernels, const MemoryFlags& memory,
                                       const std::string& drop_layers) {
  exec::SessionOptions options = session_options(kernels);
  apply_memory_flags(memory, model, options);
  apply_drop_layers(drop_layers, options);
  return options;
}

std::unique_ptr<calibrate::SessionEvaluator> open_evaluator(const std::string& path, int64_t n_ctx, int64_t batch,
                                                            const KernelFlags& kernels, const MemoryFlags& memory,
                                                            const std::string& drop_layers) {
  Model model = load_for_chunks(path, n_ctx, batch);
  exec::SessionOptions options = evaluator_options(model, kernels, memory, drop_layers);
  auto evaluator = std::make_unique<calibrate::SessionEvaluator>(std::move(model), std::move(options));
  report_numerical_mode(evaluator->session());
  return evaluator;
}

}  // namespace synapse::cli
