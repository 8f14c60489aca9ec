// Dot-product tiles: the inner loop of every CPU matrix kernel. A tile
// computes the dot products of up to kMaxTileRows encoded weight rows with
// up to kMaxTileTokens activation rows (already in the kernel's activation
// format), so a prefill kernel reuses each loaded weight block across tokens
// and each activation block across rows.
//
// Batch invariance: the float written for a (row, token) pair is bit-
// identical whatever the tile's rows and tokens are and wherever the pair
// sits in the tile: the sum runs over the blocks in order with the same
// per-pair operations. Speculative verification and batching rely on it.
//
// This header has no inline functions: it is included by translation units
// compiled with wider SIMD flags, whose inline copies could otherwise be
// chosen by the linker for code that runs on any CPU.
#pragma once

#include <cstdint>

#include "encoding/encoding.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {

inline constexpr int kMaxTileRows = 4;
inline constexpr int kMaxTileTokens = 4;
// Tokens of DotKernel::wide_tile.
inline constexpr int kWideTileTokens = 8;
// A panel: up to kPanelRows weight rows against any number of tokens.
inline constexpr int kPanelRows = 32;

// y[t * y_stride + r] = dot(weight row r, activation row t) for r < rows,
// t < tokens; weight row r starts at w + r * w_stride, activation row t at
// x + t * x_stride; n elements, a multiple of the weight's block size.
using DotTile = void (*)(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride,
                         int tokens, int64_t n, float* y, int64_t y_stride);

// y[r] = dot(weight row r, x) for r < rows, one activation row x: a
// matrix-vector product (decode), bit-identical to the tile's pairs. Rows
// go in passes of DotKernel::matvec_rows; `rows` is a multiple of it.
using DotRows = void (*)(const uint8_t* w, uint64_t w_stride, int64_t rows, const uint8_t* x, int64_t n, float* y);

struct DotKernel {
  ActivationFormat activation = ActivationFormat::F32;
  DotTile tile = nullptr;
  // Optional: exactly kWideTileTokens tokens in one call, every pair the
  // same bits as `tile` gives it, each weight block loaded once for all of
  // them rather than once per kMaxTileTokens (steps of 8 tokens: batched
  // decoding of 8 sequences, speculative verification).
  DotTile wide_tile = nullptr;
  // Optional, for many tokens (prefill): the same products as `tile` for up
  // to kPanelRows rows and any token count, with every pair's float bit-
  // identical to the tile's; it repacks the rows first, so it pays off only
  // from panel_min_tokens tokens on (where it beats the tiles, measured
  // per kernel with bench/kernels).
  DotTile panel = nullptr;
  int panel_min_tokens = 16;
  // Optional, for one token: whole passes of matvec_rows rows at a time
  // (the rest go through the tile). Up to matvec_max_tokens tokens go
  // through it token after token over blocks of rows that stay in L2, so
  // the weights still come from memory once (where that beats the tiles,
  // measured per kernel with bench/kernels).
  DotRows matvec = nullptr;
  int matvec_rows = 0;
  int matvec_max_tokens = 1;
};

// The kernel for weights of `encoding` compiled for exactly `target`, or a
// kernel with a null tile when there is none for that pair. Callers pick
// the target (best_cpu_target() or one forced by a test).
DotKernel find_dot_kernel(Encoding encoding, CpuTarget target);

// The kernel for `encoding` on the most capable target at or below `target`
// that has one (the scalar kernel at worst); null tile when the encoding
// has no CPU kernel at all.
DotKernel best_dot_kernel(Encoding encoding, CpuTarget target);

}  // namespace synapse::cpu
