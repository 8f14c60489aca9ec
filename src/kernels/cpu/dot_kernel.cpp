#include "kernels/cpu/dot_kernel.h"

#include "kernels/cpu/dot_families.h"

namespace synapse::cpu {

DotKernel find_dot_kernel(Encoding encoding, CpuTarget target) {
  for (auto find : {find_float_dot_kernel, find_legacy_dot_kernel, find_kquant_dot_kernel}) {
    const DotKernel kernel = find(encoding, target);
    if (kernel.tile) return kernel;
  }
  return {};
}

DotKernel best_dot_kernel(Encoding encoding, CpuTarget target) {
  for (int t = static_cast<int>(target); t >= 0; --t) {
    const DotKernel kernel = find_dot_kernel(encoding, static_cast<CpuTarget>(t));
    if (kernel.tile) return kernel;
  }
  return {};
}

}  // namespace synapse::cpu
