// How the matrix-vector kernels (decode) ask memory for the rows they read
// next; matvec_prefetch.h carries out either style. Which one a CPU streams
// best with was measured, not derived: see matvec_prefetch.h.
#pragma once

namespace synapse::cpu {

enum class MatvecPrefetchStyle {
  kPassWindows,  // linear windows: the pass 4 passes on, and the next pass again
  kWalkAhead     // in every row of a pass, the bytes the walk reads 8 KiB later, into L1
};

// The style for this machine, decided once: SYNAPSE_MATVEC_PREFETCH=windows
// or =walk (for benchmarks on a new kind of host), else by CPU model.
MatvecPrefetchStyle matvec_prefetch_style();

}  // namespace synapse::cpu
