#include "kernels/cpu/matvec_prefetch_style.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace synapse::cpu {
namespace {

// AMD family 1Ah (Zen 5) is where walking ahead was measured to stream better
// (matvec_prefetch.h); windows were tuned on a Zen 4 and stay the default
// elsewhere until measured.
bool is_amd_zen5() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char vendor[12];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (std::memcmp(vendor, "AuthenticAMD", 12) != 0 || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
  return family == 0x1a;
#else
  return false;
#endif
}

MatvecPrefetchStyle decide() {
  if (const char* setting = std::getenv("SYNAPSE_MATVEC_PREFETCH")) {
    if (std::strcmp(setting, "walk") == 0) return MatvecPrefetchStyle::kWalkAhead;
    if (std::strcmp(setting, "windows") == 0) return MatvecPrefetchStyle::kPassWindows;
  }
  return is_amd_zen5() ? MatvecPrefetchStyle::kWalkAhead : MatvecPrefetchStyle::kPassWindows;
}

}  // namespace

MatvecPrefetchStyle matvec_prefetch_style() {
  static const MatvecPrefetchStyle style = decide();
  return style;
}

}  // namespace synapse::cpu
