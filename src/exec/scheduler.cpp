#include "exec/scheduler.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <variant>

#include "exec/node_runner.h"
#include "exec/region_decision.h"
#include "exec/region_order.h"
#include "synapse/error.h"

namespace synapse::exec {

const char* to_string(RegionOutcome outcome) {
  switch (outcome) {
    case RegionOutcome::Executed: return "Executed";
    case RegionOutcome::Skipped: return "Skipped";
    case RegionOutcome::Bypassed: return "Bypassed";
    case RegionOutcome::Absent: return "Absent";
  }
  return "?";
}

const char* to_string(ir::RegionKindTag tag) {
  switch (tag) {
    case ir::RegionKindTag::Embedding: return "Embedding";
    case ir::RegionKindTag::Attention: return "Attention";
    case ir::RegionKindTag::Mlp: return "Mlp";
    case ir::RegionKindTag::Router: return "Router";
    case ir::RegionKindTag::Expert: return "Expert";
    case ir::RegionKindTag::Merge: return "Merge";
    case ir::RegionKindTag::Logits: return "Logits";
  }
  return "?";
}

RegionScheduler::RegionScheduler(const Model& model, const KernelRegistry& kernels, ref::Accumulation accumulation,
                                 int64_t logits_rows, LayerDrop drop, VectorReads vector_reads)
    : model_(model),
      accumulation_(accumulation),
      drop_(std::move(drop)),
      chunk_(model.graph.bounds.at("chunk")),
      logits_rows_(std::clamp<int64_t>(logits_rows, 1, chunk_)),
      weights_(model, drop_.weights, vector_reads),
      scratch_(model.graph, weights_, model.graph.bounds.at("max_ctx")),
      order_(region_order(model.graph)),
      entry_inputs_(model.graph.entry_inputs()),
      plan_(plan_buffers(model.graph, order_, chunk_, logits_rows_)),
      arena_(new float[plan_.arena_floats]),
      values_(model.graph.values.size()),
      gather_(model.graph, chunk_) {
  const ir::Graph& graph = model.graph;
  for (const ir::Region& region : graph.regions) {
    kernels_.push_back(kernels.bind(graph, region));
    weight_bytes_.push_back(region_weight_bytes(graph, weights_, region));
    std::vector<ir::ValueId> required;
    for (ir::ValueId input : region.boundary.inputs)
      for (ir::NodeId member : region.members) {
        const ir::Node& node = graph.node(member);
        if (std::holds_alternative<ir::Merge>(node.op)) continue;
        if (std::find(node.operands.begin(), node.operands.end(), input) != node.operands.end()) {
          required.push_back(input);
          break;
        }
      }
    required_inputs_.push_back(std::move(required));
  }
  position_in_order_.resize(graph.regions.size());
  for (size_t i = 0; i < order_.size(); ++i) position_in_order_[order_[i].index] = i;
  for (size_t v = 0; v < values_.size(); ++v)
    if (plan_.offsets[v] != BufferPlan::kNoBuffer) values_[v].data = arena_.get() + plan_.offsets[v];
  for (ir::NodeId out : graph.entry_outputs()) {
    const ir::Node& node = graph.node(out);
    if (std::get<ir::Output>(node.op).kind == ir::OutputKind::Logits) logits_ = node.operands[0];
  }
  if (!logits_.valid()) throw Error(ErrorKind::InvalidValue, "the graph has no logits output");
  for (size_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    if (region.kind.tag == ir::RegionKindTag::Embedding && region.boundary.outputs.size() == 1) {
      embedding_ = ir::RegionId{static_cast<uint32_t>(r)};
      embedding_out_ = region.boundary.outputs[0];
    } else if (region.kind.tag == ir::RegionKindTag::Logits && region.boundary.inputs.size() == 1) {
      head_input_ = region.boundary.inputs[0];
    }
  }
  if (embedding_out_.valid()) hidden_width_ = graph.value(embedding_out_).type.shape.back().size;
  if ((drop_.hidden_in && !embedding_out_.valid()) || (drop_.hidden_out && !head_input_.valid()))
    throw Error(ErrorKind::InvalidValue, "the graph has no single residual stream between its embedding and output "
                                         "head to split into pipeline stages");
  // Several sequences' logits rows are gathered before their product.
  if (logits_rows_ > 1) {
    const ir::Node& logits = graph.node(graph.value(logits_).producer);
    const int64_t width = graph.value(logits.operands[0]).type.shape.back().size;
    scratch_.logits_input.resize(static_cast<size_t>(logits_rows_ * width));
  }
}

std::span<const float> RegionScheduler::run(const StepInput& input, KvState& kv, const std::atomic<bool>* cancel) {
  const auto tokens = static_cast<int64_t>(input.tokens.size());
  if (tokens < 1 || tokens > chunk_ || input.positions.size() != input.tokens.size())
    throw Error(ErrorKind::InvalidValue, "a step takes 1.." + std::to_string(chunk_) + " tokens, one position each");
  int64_t output_rows = 0, covered = 0;
  for (const StepSequence& sequence : input.sequences) {
    if (!sequence.kv || sequence.first != covered || sequence.count < 1)
      throw Error(ErrorKind::InvalidValue, "a step's sequences must cover its tokens in order, each with KV state");
    covered += sequence.count;
    output_rows += logits_rows_of(input.output_rows, sequence.count);
  }
  if (input.sequences.empty()) output_rows = logits_rows_of(input.output_rows, tokens);
  else if (covered != tokens) throw Error(ErrorKind::InvalidValue, "a step's sequences must cover its tokens");
  if (output_rows > logits_rows_)
    throw Error(ErrorKind::InvalidValue, "a step asks for " + std::to_string(output_rows) +
                                             " logits rows; the session plans for " + std::to_string(logits_rows_) +
                                             " (create it for all logits)");
  const ir::Graph& graph = model_.graph;
  for (TensorRef& value : values_) value.present = false;
  for (ir::NodeId entry : entry_inputs_) {
    const ir::Node& node = graph.node(entry);
    TensorRef& value = values_[node.result->index];
    const bool ids = std::get<ir::Input>(node.op).kind == ir::EntryKind::TokenIds;
    value.ids = ids ? input.tokens.data() : input.positions.data();
    value.rows = tokens;
    value.cols = 1;
    value.present = true;
  }

  if (drop_.hidden_in) {
    if (input.hidden.size() != static_cast<size_t>(tokens * hidden_width_))
      throw Error(ErrorKind::InvalidValue, "a stage step of " + std::to_string(tokens) + " tokens takes " +
                                               std::to_string(tokens * hidden_width_) + " hidden values, not " +
                                               std::to_string(input.hidden.size()));
    TensorRef& h = values_[embedding_out_.index];
    std::copy(input.hidden.begin(), input.hidden.end(), h.data);
    h.rows = tokens;
    h.cols = hidden_width_;
    h.present = true;
  }

  StepContext ctx{graph, weights_, kv, values_, scratch_, tokens, accumulation_};
  ctx.output_rows = input.output_rows;
  ctx.sequences = input.sequences;
  ctx.residency = residency_.get();
  for (ir::RegionId id : order_) {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
    const auto start = std::chrono::steady_clock::now();
    ctx.weight_bytes_loaded = {};
    if (drop_.hidden_in && id == embedding_) continue;  // its output came with the step
    const RegionOutcome outcome = run_region(ctx, id);
    // A stage's trace holds its own regions only.
    if (!listener_ || (drop_.placed && drop_.dropped(id))) continue;
    const ir::Region& region = graph.regions[id.index];
    RegionEvent event;
    event.step = input.step;
    event.position = input.positions[0];
    event.tokens = tokens;
    event.region = id;
    event.kind = to_string(region.kind.tag);
    event.layer = region.kind.layer;
    event.expert = region.kind.expert;
    event.outcome = outcome;
    event.provenance = region.activation.provenance;
    event.dropped = drop_.dropped(id);
    event.quality_bounded = !drop_.empty() && !drop_.placed;
    event.duration_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    event.weight_bytes_touched = outcome == RegionOutcome::Executed ? weight_bytes_[id.index].touched(tokens) : 0;
    event.weight_bytes_loaded = ctx.weight_bytes_loaded.loaded;
    event.weight_bytes_prefetched = ctx.weight_bytes_loaded.prefetched;
    if (residency_) event.weight_bytes_resident = residency_->counters().resident_bytes;
    event.kernel = kernels_[id.index]->name();
    listener_(event, values_);
  }
  const TensorRef& out = values_[(drop_.hidden_out ? head_input_ : logits_).index];
  return {out.data, static_cast<size_t>(out.present ? out.elements() : 0)};
}

RegionOutcome RegionScheduler::run_region(StepContext& ctx, ir::RegionId id) {
  const ir::Region& region = model_.graph.regions[id.index];
  const auto skip = [&](const ir::SkipSemantics& semantics) {
    for (ir::NodeId member : region.members) skip_node(ctx, member, semantics);
  };
  if (drop_.dropped(id)) {  // before its inputs: a dropped layer's route is absent too
    const ir::SkipSemantics& semantics = *drop_.regions[id.index];
    skip(semantics);
    return std::holds_alternative<ir::Bypass>(semantics) ? RegionOutcome::Bypassed : RegionOutcome::Skipped;
  }
  for (ir::ValueId input : required_inputs_[id.index])
    if (!values_[input.index].present) {
      skip(ir::NotSkippable{});
      return RegionOutcome::Absent;
    }
  if (!region_selected(region.activation, values_)) {
    skip(region.activation.skip);
    return std::holds_alternative<ir::Bypass>(region.activation.skip) ? RegionOutcome::Bypassed
                                                                      : RegionOutcome::Skipped;
  }
  execute(ctx, id);
  return RegionOutcome::Executed;
}

void RegionScheduler::execute(StepContext& ctx, ir::RegionId id) {
  const ir::Region& region = model_.graph.regions[id.index];
  if (!residency_) return gather_.run(ctx, region, *kernels_[id.index]);
  const memory::ChunkPins pins(*residency_, residency_->plan().region_chunks[id.index]);
  ctx.weight_bytes_loaded += pins.loaded();
  prefetch_after(position_in_order_[id.index]);
  gather_.run(ctx, region, *kernels_[id.index]);
  if (region.kind.tag == ir::RegionKindTag::Router) {
    // Its route is known now: load the experts it picked, and guess the next layer's.
    prefetch_after(position_in_order_[id.index]);
    if (prefetch_depth_ > 0) expert_prefetch_->after(id, ctx, *residency_);
  }
}

void RegionScheduler::prefetch_after(size_t at) {
  const memory::ResidencyPlan& plan = residency_->plan();
  // The scan is bounded: past a layer of experts whose route is unknown
  // there is nothing more to learn this early.
  constexpr size_t kScan = 256;
  int ahead = 0;
  for (size_t i = at + 1; i < std::min(order_.size(), at + 1 + kScan) && ahead < prefetch_depth_; ++i) {
    if (drop_.dropped(order_[i])) continue;
    const ir::Region& region = model_.graph.regions[order_[i].index];
    const std::vector<uint32_t>& chunks = plan.region_chunks[order_[i].index];
    if (std::all_of(chunks.begin(), chunks.end(), [&](uint32_t c) { return plan.chunks[c].pinned; })) continue;
    // A routed region whose route is not computed yet may not run: no guess.
    const auto* route = std::get_if<ir::RouteSlot>(&region.activation.decision);
    if (route && !values_[route->router.index].present) continue;
    if (!region_selected(region.activation, values_)) continue;
    residency_->prefetch(chunks);
    // A routed region known to run is one of the k its router picked, all
    // of which run next: they do not use up the depth.
    if (!route) ++ahead;
  }
}

void RegionScheduler::page_weights(std::unique_ptr<memory::WeightResidency> residency, int prefetch_depth) {
  const memory::ResidencyPlan& plan = residency->plan();
  for (uint32_t w = 0; w < plan.weights.size(); ++w)
    if (plan.weights[w].count > 0) weights_.bind(ir::TensorId{w}, residency->data(ir::TensorId{w}));
  expert_prefetch_ = std::make_unique<ExpertPrefetch>(model_.graph, residency->plan());
  residency_ = std::move(residency);
  prefetch_depth_ = prefetch_depth;
}

}  // namespace synapse::exec
