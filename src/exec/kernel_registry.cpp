#include "exec/kernel_registry.h"

#include "exec/node_runner.h"

namespace synapse::exec {

void ReferenceRegionKernel::run(StepContext& ctx, const ir::Region& region) {
  for (ir::NodeId member : region.members) run_node(ctx, member);
}

KernelRegistry::KernelRegistry() : reference_(std::make_shared<ReferenceRegionKernel>()) {}

void KernelRegistry::add(RegionPattern pattern, std::shared_ptr<RegionKernel> kernel) {
  entries_.push_back({std::move(pattern), std::move(kernel)});
}

std::shared_ptr<RegionKernel> KernelRegistry::bind(const ir::Graph& graph, const ir::Region& region) const {
  for (const Entry& entry : entries_)
    if (entry.pattern(graph, region)) return entry.kernel;
  return reference_;
}

}  // namespace synapse::exec
