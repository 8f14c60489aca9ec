#include "cli/session_evaluator.h"

#include <algorithm>

#include "cli/layer_drop_flag.h"

namespace synapse::cli {

std::unique_ptr<calibrate::SessionEvaluator> open_evaluator(const std::string& path, int64_t n_ctx, int64_t batch,
                                                       const KernelFlags& kernels, const MemoryFlags& memory,
                                                       const std::string& drop_layers) {
  Model model = load_model(path, {.max_ctx = static_cast<uint32_t>(n_ctx),
                                  .chunk = static_cast<uint32_t>(std::min(batch, n_ctx))});
  exec::SessionOptions options = session_options(kernels);
  apply_memory_flags(memory, model, options);
  apply_drop_layers(drop_layers, options);
  auto evaluator = std::make_unique<calibrate::SessionEvaluator>(std::move(model), std::move(options));
  report_numerical_mode(evaluator->session());
  return evaluator;
}

}  // namespace synapse::cli
