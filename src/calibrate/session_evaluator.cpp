#include "calibrate/session_evaluator.h"

#include <algorithm>
#include <utility>

namespace synapse::calibrate {
namespace {

exec::SessionOptions whole_steps(const Model& model, exec::SessionOptions options) {
  options.logits_rows = model.graph.bounds.at("chunk");
  return options;
}

}  // namespace

SessionEvaluator::SessionEvaluator(Model model, exec::SessionOptions options)
    : model_(std::move(model)), session_(model_, whole_steps(model_, std::move(options))) {}

void SessionEvaluator::eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) {
  session_.reset();
  const auto n = static_cast<int64_t>(tokens.size());
  const auto vocab = static_cast<size_t>(session_.vocab());
  for (int64_t begin = 0; begin < n; begin += session_.chunk()) {
    const int64_t end = std::min(begin + session_.chunk(), n);
    const std::span<const int32_t> step = tokens.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
    // Scored positions of this step: [from, to); the last token scores nothing.
    const int64_t from = std::max(begin, first), to = std::min(end, n - 1);
    if (from >= to) {
      session_.eval(step);
      continue;
    }
    // The step's last end - from rows, of which the first to - from count.
    const std::span<const float> logits = session_.eval_last(step, end - from);
    std::copy_n(logits.begin(), static_cast<size_t>(to - from) * vocab,
                rows.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(from - first) * vocab));
  }
}

}  // namespace synapse::calibrate
