#include "exec/route_gather.h"

#include <algorithm>
#include <variant>

namespace synapse::exec {
namespace {

// Puts the region's inputs (the first saved.size() of them) and the step's
// token count back however the gathered run ends. An input left pointing
// into the gather scratch after a throw (a failed weight read) would be
// where the next step writes that value.
class RestoreInputs {
 public:
  RestoreInputs(StepContext& ctx, const ir::Region& region, const std::vector<TensorRef>& saved)
      : ctx_(ctx), region_(region), saved_(saved), tokens_(ctx.tokens) {}
  ~RestoreInputs() {
    ctx_.tokens = tokens_;
    // Last saved first: an input listed twice ends with its first saving.
    for (size_t i = saved_.size(); i-- > 0;) ctx_.values[region_.boundary.inputs[i].index] = saved_[i];
  }
  RestoreInputs(const RestoreInputs&) = delete;
  RestoreInputs& operator=(const RestoreInputs&) = delete;

 private:
  StepContext& ctx_;
  const ir::Region& region_;
  const std::vector<TensorRef>& saved_;
  const int64_t tokens_;
};

}  // namespace

void scatter_rows(float* x, int64_t cols, std::span<const int64_t> rows, int64_t tokens) {
  auto next = static_cast<int64_t>(rows.size()) - 1;
  for (int64_t t = tokens - 1; t >= 0; --t) {
    float* row = x + t * cols;
    if (next >= 0 && rows[static_cast<size_t>(next)] == t) {
      // rows[next] >= next: the row moves whole rows later, into no part of
      // itself, or is already in place.
      if (t != next) std::copy_n(x + next * cols, cols, row);
      --next;
    } else {
      std::fill(row, row + cols, 0.0f);
    }
  }
}

RouteGather::RouteGather(const ir::Graph& graph, int64_t chunk) : rows_(static_cast<size_t>(chunk)) {
  int64_t floats = 0;
  size_t inputs = 0;
  for (const ir::Region& region : graph.regions) {
    if (!std::holds_alternative<ir::RouteSlot>(region.activation.decision)) continue;
    int64_t region_floats = 0;
    for (ir::ValueId input : region.boundary.inputs)
      region_floats += chunk * extent_of(graph.value(input).type, chunk).cols;
    floats = std::max(floats, region_floats);
    inputs = std::max(inputs, region.boundary.inputs.size());
  }
  gathered_.resize(static_cast<size_t>(floats));
  rows_.clear();
  saved_.reserve(inputs);
}

void RouteGather::run(StepContext& ctx, const ir::Region& region, RegionKernel& kernel) {
  const auto* route = std::get_if<ir::RouteSlot>(&region.activation.decision);
  const int64_t tokens = ctx.tokens;
  bool gatherable = route != nullptr && tokens > 1;
  for (ir::ValueId input : region.boundary.inputs) {
    const TensorRef& x = ctx.values[input.index];
    gatherable = gatherable && x.data != nullptr && x.rows == tokens;
  }
  if (gatherable) {
    const TensorRef& gates = ctx.values[route->router.index];
    rows_.clear();
    for (int64_t t = 0; t < tokens; ++t)
      if (gates.data[t * gates.cols + route->slot] != 0.0f) rows_.push_back(t);
    gatherable = static_cast<int64_t>(rows_.size()) < tokens;
  }
  if (!gatherable) {
    kernel.run(ctx, region);
    return;
  }
  const auto selected = static_cast<int64_t>(rows_.size());
  saved_.clear();
  {
    const RestoreInputs restore(ctx, region, saved_);
    float* next = gathered_.data();
    for (ir::ValueId input : region.boundary.inputs) {
      TensorRef& x = ctx.values[input.index];
      saved_.push_back(x);
      for (int64_t i = 0; i < selected; ++i)
        std::copy_n(x.data + rows_[static_cast<size_t>(i)] * x.cols, x.cols, next + i * x.cols);
      x.data = next;
      x.rows = selected;
      next += selected * x.cols;
    }
    ctx.tokens = selected;
    kernel.run(ctx, region);
  }
  for (ir::ValueId output : region.boundary.outputs) {
    TensorRef& y = ctx.values[output.index];
    if (!y.present) continue;
    scatter_rows(y.data, y.cols, rows_, tokens);
    y.rows = tokens;
  }
}

}  // namespace synapse::exec
