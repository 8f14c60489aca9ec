// The SIMD instruction sets a CPU kernel can be compiled for, and which of
// them this machine runs. Kernels for each target live in their own
// translation units (file suffix _avx2 / _avx512 / _vnni, compiled with that
// target's flags); everything else dispatches at run time.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace synapse::cpu {

// Ordered from least to most capable; each includes the ones before it.
enum class CpuTarget : unsigned char {
  Scalar,      // portable C++
  Avx2,        // AVX2 + FMA + F16C
  Avx512,      // AVX-512 F/BW/VL/DQ
  Avx512Vnni,  // AVX-512 plus VNNI int8 dot products
};

const char* to_string(CpuTarget target);  // "scalar", "avx2", "avx512", "avx512vnni"
std::optional<CpuTarget> cpu_target_from_name(std::string_view name);

// Whether this machine (CPU and OS register state) runs code for target.
bool cpu_supports(CpuTarget target);
// The most capable target this machine runs.
CpuTarget best_cpu_target();
// Every target this machine runs, least capable first.
std::vector<CpuTarget> supported_cpu_targets();

}  // namespace synapse::cpu
