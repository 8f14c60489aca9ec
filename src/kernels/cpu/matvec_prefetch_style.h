// How the matrix-vector kernels (decode) ask memory for the rows they read
// next; matvec_prefetch.h carries out either style. Which one a CPU streams
// best with was measured, not derived: see matvec_prefetch.h.
#pragma once

namespace synapse::cpu {

enum class MatvecPrefetchStyle {
  kPassWindows,  // linear windows: the pass 4 passes on, and the next pass again
  kWalkAhead     // in every row of a pass, the bytes the walk reads 8 KiB later, into L1
};

// The weights a kernel walks: the style that streams best can differ by
// how much a kernel computes per byte.
enum class MatvecWeights {
  kBlocks,       // Q8_0, Q4_0, F16: few instructions per byte
  kSuperBlocks   // the K-quants: about twice as many
};

// The style for this machine and kind of weights, decided once:
// SYNAPSE_MATVEC_PREFETCH=windows or =walk (for benchmarks on a new kind
// of host), else by CPU model.
MatvecPrefetchStyle matvec_prefetch_style(MatvecWeights weights);

}  // namespace synapse::cpu
