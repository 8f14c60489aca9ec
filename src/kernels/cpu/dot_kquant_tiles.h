// The SIMD dot tiles of the k-quant encodings (Q4_K, Q5_K, Q6_K weights
// against Q8K activations), one translation unit per target, plus the byte
// layouts those units read. dot_kquant.cpp maps (encoding, target) to the
// tiles and checks the layout constants against blocks.h and activation.h.
//
// Declarations only: this header is included by translation units compiled
// with wider SIMD flags (see dot_kernel.h, which is safe to include there).
#pragma once

#include <cstdint>

#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu::kquant {

inline constexpr int64_t kSuperElems = 256;

// ActQ8KBlock: float d, int16 bsums[16], int8 qs[256].
inline constexpr uint64_t kActBlockBytes = 292;
inline constexpr uint64_t kActBsumsOffset = 4;
inline constexpr uint64_t kActQsOffset = 36;

// Q4_K: fp16 d, fp16 dmin, scales[12], qs[128].
inline constexpr uint64_t kQ4KBytes = 144;
inline constexpr uint64_t kQ4KScalesOffset = 4;
inline constexpr uint64_t kQ4KQsOffset = 16;
// Q5_K: fp16 d, fp16 dmin, scales[12], qh[32], qs[128].
inline constexpr uint64_t kQ5KBytes = 176;
inline constexpr uint64_t kQ5KScalesOffset = 4;
inline constexpr uint64_t kQ5KQhOffset = 16;
inline constexpr uint64_t kQ5KQsOffset = 48;
// Q6_K: ql[128], qh[64], int8 scales[16], fp16 d.
inline constexpr uint64_t kQ6KBytes = 210;
inline constexpr uint64_t kQ6KQlOffset = 0;
inline constexpr uint64_t kQ6KQhOffset = 128;
inline constexpr uint64_t kQ6KScalesOffset = 192;
inline constexpr uint64_t kQ6KDOffset = 208;

// Each target's tiles: dot_kquant_avx2.cpp, dot_kquant_vnni.cpp.
struct Tiles { DotTile q4_k, q5_k, q6_k; };
extern const Tiles kAvx2Tiles, kVnniTiles;
// The panels that go with the VNNI tiles (dot_kquant_panel_vnni.cpp).
struct Panels { DotTile q4_k, q6_k; };
extern const Panels kVnniPanels;
// The matrix-vector kernels for one token (dot_kquant_matvec_vnni.cpp).
struct Matvecs {
  DotRows q4_k, q5_k, q6_k;
  int rows;
};
extern const Matvecs kVnniMatvecs;

}  // namespace synapse::cpu::kquant
