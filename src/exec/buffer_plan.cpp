#include "exec/buffer_plan.h"

#include <algorithm>
#include <variant>

#include "exec/step_context.h"

namespace synapse::exec {
namespace {

struct Lifetime {
  uint32_t value = 0;
  int64_t first = 0;  // schedule index of the producing region
  int64_t last = 0;   // schedule index of the last using region
  uint64_t floats = 0;
};

struct Placed {
  uint64_t offset;
  uint64_t floats;
  int64_t last;
};

// The lowest offset where `floats` fit between the live blocks.
uint64_t first_fit(std::vector<Placed>& live, uint64_t floats) {
  std::sort(live.begin(), live.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  uint64_t cursor = 0;
  for (const Placed& block : live) {
    if (block.offset >= cursor + floats) return cursor;
    cursor = std::max(cursor, block.offset + block.floats);
  }
  return cursor;
}

}  // namespace

BufferPlan plan_buffers(const ir::Graph& graph, std::span<const ir::RegionId> order, int64_t max_tokens,
                        int64_t max_logits_rows) {
  std::vector<int64_t> slot_of_node(graph.nodes.size(), -1);
  for (size_t i = 0; i < order.size(); ++i)
    for (ir::NodeId member : graph.region(order[i]).members) slot_of_node[member.index] = static_cast<int64_t>(i);

  std::vector<Lifetime> lifetimes;
  for (uint32_t v = 0; v < graph.values.size(); ++v) {
    const ir::Value& value = graph.values[v];
    const ir::Node& producer = graph.node(value.producer);
    if (ir::is_entry(producer.op) || std::holds_alternative<ir::StateAppend>(producer.op)) continue;
    const bool logits = std::holds_alternative<ir::Logits>(producer.op);
    const Extent extent = extent_of(value.type, logits ? std::min(max_tokens, max_logits_rows) : max_tokens);
    const int64_t first = slot_of_node[value.producer.index];
    lifetimes.push_back({v, first, first, static_cast<uint64_t>(extent.rows * extent.cols)});
  }
  std::vector<int64_t> last_use(graph.values.size(), -1);
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    // An entry output is read after the whole schedule.
    const int64_t when = std::holds_alternative<ir::Output>(node.op) ? static_cast<int64_t>(order.size())
                                                                      : slot_of_node[n];
    for (ir::ValueId operand : node.operands) last_use[operand.index] = std::max(last_use[operand.index], when);
  }
  for (Lifetime& lifetime : lifetimes) lifetime.last = std::max(lifetime.last, last_use[lifetime.value]);
  std::sort(lifetimes.begin(), lifetimes.end(), [](const Lifetime& a, const Lifetime& b) {
    return a.first != b.first ? a.first < b.first : a.value < b.value;
  });

  BufferPlan plan;
  plan.offsets.assign(graph.values.size(), BufferPlan::kNoBuffer);
  std::vector<Placed> live;
  for (const Lifetime& lifetime : lifetimes) {
    std::erase_if(live, [&](const Placed& block) { return block.last < lifetime.first; });
    const uint64_t offset = first_fit(live, lifetime.floats);
    live.push_back({offset, lifetime.floats, lifetime.last});
    plan.offsets[lifetime.value] = offset;
    plan.arena_floats = std::max(plan.arena_floats, offset + lifetime.floats);
  }
  return plan;
}

}  // namespace synapse::exec
