// The SIMD dot tiles of the legacy block encodings (Q8_0, Q4_0 weights
// against Q8 activations), one translation unit per target;
// dot_legacy.cpp maps (encoding, target) to them.
//
// Declarations only: this header is included by translation units compiled
// with wider SIMD flags (see dot_kernel.h, which is safe to include there).
#pragma once

#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu::legacy {

// Each target's tiles: dot_legacy_avx2.cpp, dot_legacy_vnni.cpp; and
// panels (DotKernel::panel): dot_legacy_panel_vnni.cpp.
struct Tiles { DotTile q8_0, q4_0, q5_0; };
extern const Tiles kAvx2Tiles, kVnniTiles;
// DotKernel::wide_tile (kWideTileTokens tokens): dot_legacy_vnni.cpp; none
// for Q4_0, whose panel serves from 2 tokens.
extern const Tiles kVnniWideTiles;
struct Panels { DotTile q8_0, q4_0; };
extern const Panels kVnniPanels;
// Matrix-vector products (DotKernel::matvec): dot_legacy_matvec_vnni.cpp.
struct Matvecs {
  DotRows q8_0, q4_0;
  int rows;
};
extern const Matvecs kVnniMatvecs;

}  // namespace synapse::cpu::legacy
