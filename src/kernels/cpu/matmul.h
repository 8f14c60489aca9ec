// Matrix products on the CPU dot kernels: y[t, o] = x[t, :] . w[o, :]
// (+ bias[o]). Activations are quantized once per activation format, then
// every worker of the pool computes a contiguous share of the output rows
// (streaming its own part of the weights). Within a share, tiles of rows x
// tokens reuse each loaded weight block across tokens, and tokens are
// blocked so their activations stay in cache across rows. From its
// panel_min_tokens tokens on, a kernel with a panel (dot_kernel.h) takes
// kPanelRows rows at a time against every token instead.
//
// A group of products of the same x (Q, K and V; gate and up) runs in one
// fork/join, with x quantized once: each worker takes its share of every
// product's rows.
//
// Every output element is one dot-kernel pair computed the same way for any
// token count, grouping or thread count, so results are batch invariant.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu/dot_kernel.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/ref/linear.h"

namespace synapse::cpu {

// Bytes of the row blocks that a kernel's matrix-vector product runs token
// after token (up to DotKernel::matvec_max_tokens tokens): small enough to
// stay in L2 between tokens, large enough that each call's setup (laying
// out the activation row) is small next to its rows.
inline constexpr uint64_t kMatvecBlockBytes = 256 << 10;

struct MatmulProduct {
  const ref::EncodedMatrix* w = nullptr;
  const float* bias = nullptr;  // optional, w.rows floats
  float* y = nullptr;           // [tokens, w.rows]
  DotKernel kernel;             // from best_dot_kernel(w.encoding, ...); must have a tile
};

// Bytes of activation scratch for `tokens` rows of `cols` in every format.
uint64_t matmul_scratch_bytes(int64_t tokens, int64_t cols);

// x is [tokens, cols] with cols == w.cols of every product; scratch holds
// matmul_scratch_bytes(tokens, cols) bytes.
void matmul_group(const float* x, int64_t tokens, std::span<const MatmulProduct> products, uint8_t* scratch,
                  ThreadPool& pool);

inline void matmul(const float* x, int64_t tokens, const MatmulProduct& product, uint8_t* scratch,
                   ThreadPool& pool) {
  matmul_group(x, tokens, std::span(&product, 1), scratch, pool);
}

}  // namespace synapse::cpu
