#include "kernels/cpu/matvec_prefetch_style.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace synapse::cpu {
namespace {

enum class CpuMaker { kOther, kIntel, kAmdZen5 };

CpuMaker cpu_maker() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return CpuMaker::kOther;
  char vendor[12];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (std::memcmp(vendor, "GenuineIntel", 12) == 0) return CpuMaker::kIntel;
  if (std::memcmp(vendor, "AuthenticAMD", 12) != 0 || !__get_cpuid(1, &a, &b, &c, &d)) return CpuMaker::kOther;
  const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
  return family == 0x1a ? CpuMaker::kAmdZen5 : CpuMaker::kOther;
#else
  return CpuMaker::kOther;
#endif
}

// Where walking ahead was measured to stream better (matvec_prefetch.h):
// AMD family 1Ah (Zen 5) for every kernel; an Intel Xeon (with AMX) for
// the Q8_0 and Q4_0 ones, while its K-quant decode ran slower. That one
// Xeon decides for every Intel CPU (no other was measured). Windows were
// tuned on a Zen 4 and stay the default elsewhere.
MatvecPrefetchStyle decide(MatvecWeights weights) {
  if (const char* setting = std::getenv("SYNAPSE_MATVEC_PREFETCH")) {
    if (std::strcmp(setting, "walk") == 0) return MatvecPrefetchStyle::kWalkAhead;
    if (std::strcmp(setting, "windows") == 0) return MatvecPrefetchStyle::kPassWindows;
  }
  switch (cpu_maker()) {
    case CpuMaker::kAmdZen5: return MatvecPrefetchStyle::kWalkAhead;
    case CpuMaker::kIntel:
      return weights == MatvecWeights::kBlocks ? MatvecPrefetchStyle::kWalkAhead : MatvecPrefetchStyle::kPassWindows;
    case CpuMaker::kOther: break;
  }
  return MatvecPrefetchStyle::kPassWindows;
}

}  // namespace

MatvecPrefetchStyle matvec_prefetch_style(MatvecWeights weights) {
  static const MatvecPrefetchStyle blocks = decide(MatvecWeights::kBlocks);
  static const MatvecPrefetchStyle super_blocks = decide(MatvecWeights::kSuperBlocks);
  return weights == MatvecWeights::kBlocks ? blocks : super_blocks;
}

}  // namespace synapse::cpu
