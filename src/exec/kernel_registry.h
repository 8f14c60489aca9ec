// Region kernels and the registry that binds each region to one by pattern
// (SPEC §6). The generic reference kernel runs a region's member ops on the
// reference ops and matches every region; fused kernels are registered in
// front of it later, without touching model code.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "exec/step_context.h"
#include "ir/graph.h"

namespace synapse::exec {

class RegionKernel {
 public:
  virtual ~RegionKernel() = default;
  virtual const char* name() const = 0;
  // Computes the region's outputs for the step from its inputs in ctx.values
  // (the output buffers are bound), writing any state it appends.
  virtual void run(StepContext& ctx, const ir::Region& region) = 0;
};

class ReferenceRegionKernel final : public RegionKernel {
 public:
  const char* name() const override { return "reference"; }
  void run(StepContext& ctx, const ir::Region& region) override;
};

using RegionPattern = std::function<bool(const ir::Graph& graph, const ir::Region& region)>;
// Makes the kernel for one region (a kernel may plan its work per region).
using KernelFactory = std::function<std::shared_ptr<RegionKernel>(const ir::Graph& graph, const ir::Region& region)>;

class KernelRegistry {
 public:
  KernelRegistry();

  // Kernels are tried in the order added; the reference kernel comes last.
  void add(RegionPattern pattern, std::shared_ptr<RegionKernel> kernel);
  void add(RegionPattern pattern, KernelFactory factory);
  // The kernel of the first entry whose pattern matches the region.
  std::shared_ptr<RegionKernel> bind(const ir::Graph& graph, const ir::Region& region) const;

 private:
  struct Entry {
    RegionPattern pattern;
    KernelFactory factory;
  };
  std::vector<Entry> entries_;
  std::shared_ptr<RegionKernel> reference_;
};

}  // namespace synapse::exec
