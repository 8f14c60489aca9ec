// Each family of weight encodings registers its dot kernels here; the
// family's file maps (encoding, target) to the tile compiled for it.
#pragma once

#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu {

DotKernel find_float_dot_kernel(Encoding encoding, CpuTarget target);   // F32, F16, BF16
DotKernel find_legacy_dot_kernel(Encoding encoding, CpuTarget target);  // Q8_0, Q4_0, Q5_0
DotKernel find_kquant_dot_kernel(Encoding encoding, CpuTarget target);  // Q4_K, Q5_K, Q6_K

}  // namespace synapse::cpu
