// Per-sub-block level fitting used by the K-quant quantizers. These follow
// the search strategies of ggml's reference quantizers (make_qkx2_quants for
// the offset formats Q4_K / Q5_K, make_qx_quants for the symmetric Q6_K): try
// a handful of grid scales near the naive one and keep the least-squares best.
// The arithmetic runs in ggml's order, so (built without FMA contraction) the
// quantized bytes equal ggml's reference quantizers' output.
#pragma once

#include <cstdint>

#include "encoding/rounding.h"

namespace synapse::kquant {

// The largest sub-block the fitters accept (their scratch lives on the stack).
inline constexpr int kMaxFitElems = 32;

// Fits x[i] ~= scale * L[i] - offset with L[i] in [0, nmax], offset >= 0,
// minimising sum w[i] * error^2. Starts from the min/max grid, then tries
// grid scales (nmax + rmin + rdelta * k) / (max - min) for k = 0..nstep,
// solving the best scale and offset for each level assignment.
// Returns scale; writes the offset (>= 0) and the levels.
float fit_offset_levels(int n, int nmax, const float* x, const float* w, uint8_t* levels, float& offset,
                        float rmin, float rdelta, int nstep);

// Fits x[i] ~= scale * (L[i] - nmax) with L[i] - nmax in [-nmax, nmax - 1],
// weighting each element by x[i]^2. The element of largest magnitude anchors
// the grid at -nmax; 19 grid scales around it are tried. Returns the scale
// (negative when that element is positive; 0 for an all-zero sub-block).
float fit_symmetric_levels(int n, int nmax, const float* x, int8_t* levels);

}  // namespace synapse::kquant
