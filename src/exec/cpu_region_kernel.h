// The CPU region kernel: runs a region's members with matrix products,
// attention, activations and RoPE on the threaded SIMD kernels of
// kernels/cpu (for the chosen instruction-set target) and the remaining
// cheap ops on the reference ops, split over the same threads by rows or
// elements. Encodings without a CPU dot kernel fall back to the reference
// matmul.
#pragma once

#include <memory>

#include "exec/kernel_registry.h"
#include "kernels/cpu/cpu_target.h"

namespace synapse::exec {

struct CpuKernelOptions {
  int threads = 1;
  cpu::CpuTarget target = cpu::best_cpu_target();
};

// A registry binding every region to the CPU kernel, which runs on
// options.threads threads drawn from the process's shared workers. Throws Error(InvalidValue) for a target
// this machine cannot run or a thread count below 1.
std::shared_ptr<KernelRegistry> cpu_kernel_registry(const CpuKernelOptions& options);

}  // namespace synapse::exec
