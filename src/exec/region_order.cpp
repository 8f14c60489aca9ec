#include "exec/region_order.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>

#include "synapse/error.h"

namespace synapse::exec {

std::vector<ir::RegionId> region_order(const ir::Graph& graph) {
  const size_t n = graph.regions.size();
  std::vector<int64_t> region_of_node(graph.nodes.size(), -1);
  for (size_t r = 0; r < n; ++r)
    for (ir::NodeId member : graph.regions[r].members) region_of_node[member.index] = static_cast<int64_t>(r);

  // Edges: producer region -> consumer region, and state writer -> reader.
  std::vector<std::set<size_t>> next(n);
  for (size_t r = 0; r < n; ++r) {
    for (ir::ValueId input : graph.regions[r].boundary.inputs) {
      const int64_t from = region_of_node[graph.value(input).producer.index];
      if (from >= 0 && static_cast<size_t>(from) != r) next[from].insert(r);
    }
    for (ir::SlotId read : graph.regions[r].boundary.state_reads)
      for (size_t w = 0; w < n; ++w) {
        const auto& writes = graph.regions[w].boundary.state_writes;
        if (w != r && std::find(writes.begin(), writes.end(), read) != writes.end()) next[w].insert(r);
      }
  }
  std::vector<size_t> pending(n, 0);
  for (const auto& targets : next)
    for (size_t r : targets) ++pending[r];

  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t r = 0; r < n; ++r)
    if (pending[r] == 0) ready.push(r);
  std::vector<ir::RegionId> order;
  while (!ready.empty()) {
    const size_t r = ready.top();
    ready.pop();
    order.push_back(ir::RegionId{static_cast<uint32_t>(r)});
    for (size_t target : next[r])
      if (--pending[target] == 0) ready.push(target);
  }
  if (order.size() != n) throw Error(ErrorKind::InvalidValue, "region dependencies form a cycle");
  return order;
}

}  // namespace synapse::exec
