#include "exec/kernel_registry.h"

#include "exec/node_runner.h"

namespace synapse::exec {

void ReferenceRegionKernel::run(StepContext& ctx, const ir::Region& region) {
  for (ir::NodeId member : region.members) run_node(ctx, member);
}

KernelRegistry::KernelRegistry() : reference_(std::make_shared<ReferenceRegionKernel>()) {}

void KernelRegistry::add(RegionPattern pattern, std::shared_ptr<RegionKernel> kernel) {
  add(std::move(pattern), [kernel](const ir::Graph&, const ir::Region&) { return kernel; });
}

void KernelRegistry::add(RegionPattern pattern, KernelFactory factory) {
  entries_.push_back({std::move(pattern), std::move(factory)});
}

std::shared_ptr<RegionKernel> KernelRegistry::bind(const ir::Graph& graph, const ir::Region& region) const {
  for (const Entry& entry : entries_)
    if (entry.pattern(graph, region)) return entry.factory(graph, region);
  return reference_;
}

}  // namespace synapse::exec
