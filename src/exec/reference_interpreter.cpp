#include "exec/reference_interpreter.h"

#include <variant>

#include "exec/node_runner.h"
#include "exec/region_decision.h"
#include "synapse/error.h"

namespace synapse::exec {

ReferenceInterpreter::ReferenceInterpreter(const Model& model, ref::Accumulation accumulation, KvLayout kv)
    : model_(model),
      accumulation_(accumulation),
      weights_(model),
      kv_(model.graph, model.graph.bounds.at("max_ctx"), kv),
      scratch_(model.graph, weights_, kv_.max_ctx()),
      region_of_node_(model.graph.nodes.size(), -1) {
  for (size_t r = 0; r < model.graph.regions.size(); ++r)
    for (ir::NodeId member : model.graph.regions[r].members) region_of_node_[member.index] = static_cast<int64_t>(r);
}

InterpretedStep ReferenceInterpreter::run(std::span<const int32_t> tokens, std::span<const int32_t> positions) {
  const ir::Graph& graph = model_.graph;
  if (tokens.empty() || tokens.size() != positions.size())
    throw Error(ErrorKind::InvalidValue, "a step needs one position per token, and at least one token");
  const auto count = static_cast<int64_t>(tokens.size());

  InterpretedStep step;
  step.tokens = count;
  step.values.resize(graph.values.size());
  std::vector<TensorRef> refs(graph.values.size());
  for (uint32_t v = 0; v < graph.values.size(); ++v) {
    const ir::Node& producer = graph.node(graph.values[v].producer);
    if (const auto* input = std::get_if<ir::Input>(&producer.op)) {
      refs[v].ids = input->kind == ir::EntryKind::TokenIds ? tokens.data() : positions.data();
      refs[v].rows = count;
      refs[v].cols = 1;
      refs[v].present = true;
    } else if (!std::holds_alternative<ir::StateAppend>(producer.op)) {
      const Extent extent = extent_of(graph.values[v].type, count);
      step.values[v].resize(static_cast<size_t>(extent.rows * extent.cols));
      refs[v].data = step.values[v].data();
    }
  }

  StepContext ctx{graph, weights_, kv_, refs, scratch_, count, accumulation_};
  std::vector<int> selected(graph.regions.size(), -1);  // decided at the region's first member
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const int64_t r = region_of_node_[n];
    if (r >= 0 && selected[r] < 0) selected[r] = region_selected(graph.regions[r].activation, refs) ? 1 : 0;
    if (r >= 0 && selected[r] == 0)
      skip_node(ctx, ir::NodeId{n}, graph.regions[r].activation.skip);
    else
      run_node(ctx, ir::NodeId{n});
  }

  for (uint32_t v = 0; v < graph.values.size(); ++v)
    if (!refs[v].present) step.values[v].clear();
  for (ir::NodeId out : graph.entry_outputs()) {
    const ir::Node& node = graph.node(out);
    if (std::get<ir::Output>(node.op).kind == ir::OutputKind::Logits) step.logits = step.values[node.operands[0].index];
  }
  return step;
}

}  // namespace synapse::exec
