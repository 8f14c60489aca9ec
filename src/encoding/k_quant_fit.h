// Per-sub-block level fitting used by the K-quant quantizers and by the
// importance-weighted (imatrix) encoders. These follow the search strategies
// of ggml's quantizers (make_qkx2_quants / make_qkx3_quants for the offset
// formats, make_qx_quants for the symmetric ones, make_qp_quants for the
// weighted K-quants' scale codes): try a handful of grid scales near the
// naive one and keep the least-squares best. The arithmetic runs in ggml's
// order, so (built without FMA contraction) the quantized bytes equal ggml's.
//
// Weights are assumed finite and >= 0 (x^2, rms + |x|, or an imatrix's
// importance, which is a mean of squares).
#pragma once

#include <cmath>
#include <cstdint>

#include "encoding/rounding.h"

namespace synapse::kquant {

// The largest sub-block the fitters accept (their scratch lives on the stack).
inline constexpr int kMaxFitElems = 32;

// Fits x[i] ~= scale * L[i] - offset with L[i] in [0, nmax], offset >= 0,
// minimising sum w[i] * error^2. Starts from the min/max grid, then tries
// grid scales (nmax + rmin + rdelta * k) / (max - min) for k = 0..nstep,
// solving the best scale and offset for each level assignment.
// Returns scale; writes the offset (>= 0) and the levels. ggml's
// make_qkx2_quants and make_qkx3_quants (which only differ where a trial
// grid leaves nearest_int's range) with weights and squared errors.
float fit_offset_levels(int n, int nmax, const float* x, const float* w, uint8_t* levels, float& offset,
                        float rmin, float rdelta, int nstep);

// Fits x[i] ~= scale * (L[i] - nmax) with L[i] - nmax in [-nmax, nmax - 1],
// weighting each element by weights[i] (x[i]^2 when weights is null). The
// element of largest magnitude anchors the grid at -nmax; 19 grid scales
// around it are tried. Returns the scale (negative when that element is
// positive; 0 for an all-zero sub-block). ggml's make_qx_quants, rmse_type 1.
float fit_symmetric_levels(int n, int nmax, const float* x, const float* weights, int8_t* levels);

// Fits x[i] ~= scale * L[i] with L[i] in [0, nmax] for non-negative x (the
// fitted scales or offsets of a block's sub-blocks), minimising sum
// w[i] * error^2: the best of 9 grid scales around nmax / max, then up to
// five passes that move single levels while that improves the fit.
// Returns the scale (0 when every x is below 1e-15). ggml's make_qp_quants.
float fit_unsigned_levels(int n, int nmax, const float* x, const float* w, uint8_t* levels);

// ggml's element weights in its importance-weighted encoders:
// importance[i] * sqrt(sigma2 + x[i]^2), sigma2 a mean square of the data.
inline void weigh_by_importance(int n, const float* x, const float* importance, float sigma2, float* w) {
  for (int i = 0; i < n; ++i) w[i] = importance[i] * std::sqrt(sigma2 + x[i] * x[i]);
}

}  // namespace synapse::kquant
