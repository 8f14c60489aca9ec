#include "kernels/cpu/cpu_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace synapse::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// The features from CPUID, and whether the OS saves the wider registers
// (XCR0), read directly: compilers disagree on which names
// __builtin_cpu_supports accepts.
struct X86Features {
  bool avx2 = false;    // with FMA, F16C, BMI1, BMI2 (Highway's AVX2 code uses BMI)
  bool avx512 = false;  // F, BW, VL, DQ
  bool vnni = false;
};

X86Features read_x86_features() {
  X86Features f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), f16c = c & (1u << 29);
  if (!osxsave) return f;
  unsigned xcr0_lo, xcr0_hi;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool os_avx = (xcr0_lo & 0x6) == 0x6;           // SSE and AVX state
  const bool os_avx512 = (xcr0_lo & 0xe6) == 0xe6;      // plus opmask and ZMM state
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool bmi1 = b & (1u << 3), avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
  const bool avx512f = b & (1u << 16), avx512dq = b & (1u << 17), avx512bw = b & (1u << 30),
             avx512vl = b & (1u << 31), vnni = c & (1u << 11);
  f.avx2 = os_avx && avx2 && fma && f16c && bmi1 && bmi2;
  f.avx512 = f.avx2 && os_avx512 && avx512f && avx512dq && avx512bw && avx512vl;
  f.vnni = f.avx512 && vnni;
  return f;
}
#endif

bool machine_has(CpuTarget target) {
#if defined(__x86_64__) || defined(__i386__)
  static const X86Features features = read_x86_features();
  switch (target) {
    case CpuTarget::Scalar: return true;
    case CpuTarget::Avx2: return features.avx2;
    case CpuTarget::Avx512: return features.avx512;
    case CpuTarget::Avx512Vnni: return features.vnni;
  }
  return false;
#else
  return target == CpuTarget::Scalar;
#endif
}

}  // namespace

const char* to_string(CpuTarget target) {
  switch (target) {
    case CpuTarget::Scalar: return "scalar";
    case CpuTarget::Avx2: return "avx2";
    case CpuTarget::Avx512: return "avx512";
    case CpuTarget::Avx512Vnni: return "avx512vnni";
  }
  return "?";
}

std::optional<CpuTarget> cpu_target_from_name(std::string_view name) {
  for (CpuTarget t : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512, CpuTarget::Avx512Vnni})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

bool cpu_supports(CpuTarget target) { return machine_has(target); }

CpuTarget best_cpu_target() {
  CpuTarget best = CpuTarget::Scalar;
  for (CpuTarget t : supported_cpu_targets()) best = t;
  return best;
}

std::vector<CpuTarget> supported_cpu_targets() {
  std::vector<CpuTarget> targets;
  for (CpuTarget t : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512, CpuTarget::Avx512Vnni})
    if (machine_has(t)) targets.push_back(t);
  return targets;
}

}  // namespace synapse::cpu
