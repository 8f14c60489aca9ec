// Scaffolding shared by the dot tile tests (dot_legacy_test.cpp,
// dot_kquant_test.cpp, dot_float_test.cpp): operands of kMaxTileRows
// weight rows and kMaxTileTokens activation rows, and the three checks every
// family's tiles must pass on each target (one test per target, see
// per_cpu_target.h):
//   - each pair's float is within 1e-5 * sum |products| of a double
//     reference over the values the tile reads,
//   - batch invariance: a pair's float has the same bits whatever the tile
//     shape and the pair's place in it,
//   - a tile writes its rows x tokens outputs and nothing else.
// Panels (DotKernel::panel) are checked against the tiles: every pair's
// float has the tile's bits, and nothing else is written.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu::dot_test {

// Weight and activation rows of n elements with padding between rows (bytes
// 0xee), so the tiles must honour the strides, and the values the tile sees
// for the reference: w_values[r][i] * x_values[t][i] is exact in double.
struct Operands {
  int64_t n = 0;
  uint64_t w_stride = 0;
  uint64_t x_stride = 0;
  std::vector<uint8_t> w;
  std::vector<uint8_t> x;
  std::vector<std::vector<double>> w_values;  // dequantized weights per row
  std::vector<std::vector<double>> x_values;  // activations per token

  uint8_t* row(int r) { return w.data() + r * w_stride; }
  uint8_t* token(int t) { return x.data() + t * x_stride; }
  const uint8_t* row(int r) const { return w.data() + r * w_stride; }
  const uint8_t* token(int t) const { return x.data() + t * x_stride; }
};

inline Operands allocate_operands(int64_t n, uint64_t w_stride, uint64_t x_stride) {
  Operands ops;
  ops.n = n;
  ops.w_stride = w_stride;
  ops.x_stride = x_stride;
  ops.w.assign(kMaxTileRows * w_stride, 0xee);
  ops.x.assign(kMaxTileTokens * x_stride, 0xee);
  ops.w_values.resize(kMaxTileRows);
  ops.x_values.resize(kMaxTileTokens);
  return ops;
}

// Records weight row r, already written, as dequantize_row reads it.
inline void record_weight_row(Operands& ops, Encoding encoding, int r) {
  std::vector<float> values(ops.n);
  dequantize_row(encoding, ops.row(r), values.data(), ops.n);
  ops.w_values[r].assign(values.begin(), values.end());
}

// Records activation row t, already written as blocks of ActBlock
// (ActQ8Block or ActQ8KBlock), as d * qs.
template <class ActBlock>
void record_block_activation_row(Operands& ops, int t) {
  constexpr int kElems = sizeof(ActBlock::qs);
  std::vector<double>& values = ops.x_values[t];
  values.assign(ops.n, 0.0);
  for (int64_t b = 0; b < ops.n / kElems; ++b) {
    ActBlock block;
    std::memcpy(&block, ops.token(t) + b * sizeof(block), sizeof(block));
    for (int i = 0; i < kElems; ++i) values[b * kElems + i] = double(block.d) * block.qs[i];
  }
}

// Runs a rows x tokens tile at (row0, token0); returns y[t * rows + r].
inline std::vector<float> run_tile(const DotKernel& kernel, const Operands& ops, int row0, int rows, int token0,
                                   int tokens) {
  constexpr int64_t kYStride = 6;
  std::vector<float> y(kMaxTileTokens * kYStride, -7.0f);
  kernel.tile(ops.row(row0), ops.w_stride, rows, ops.token(token0), ops.x_stride, tokens, ops.n, y.data(), kYStride);
  std::vector<float> dense;
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) dense.push_back(y[t * kYStride + r]);
  return dense;
}

// "avx2 q4_K n=512": which kernel and operands a failure is about.
inline std::string describe(Encoding encoding, CpuTarget target, const Operands& ops) {
  return std::string(to_string(target)) + " " + encoding_info(encoding).name +
         " n=" + std::to_string(ops.n);
}

inline void expect_kernel_matches_reference(const DotKernel& kernel, const Operands& ops, const std::string& what) {
  for (int rows = 1; rows <= kMaxTileRows; ++rows) {
    for (int tokens = 1; tokens <= kMaxTileTokens; ++tokens) {
      const std::vector<float> y = run_tile(kernel, ops, 0, rows, 0, tokens);
      for (int t = 0; t < tokens; ++t) {
        for (int r = 0; r < rows; ++r) {
          double dot = 0.0, magnitude = 0.0;
          for (int64_t i = 0; i < ops.n; ++i) {
            const double product = ops.w_values[r][i] * ops.x_values[t][i];
            dot += product;
            magnitude += std::fabs(product);
          }
          ASSERT_NEAR(y[t * rows + r], dot, 1e-5 * magnitude + 1e-30)
              << what << " tile " << rows << "x" << tokens << " pair (" << r << "," << t << ")";
        }
      }
    }
  }
}

// Every tile shape at (0, 0) against the double reference, for target's own
// kernel for `encoding` (none: nothing to check; the target uses a lesser
// target's kernel, checked under that target).
inline void expect_tiles_match_reference(Encoding encoding, CpuTarget target, const Operands& ops) {
  const DotKernel kernel = find_dot_kernel(encoding, target);
  if (kernel.tile) expect_kernel_matches_reference(kernel, ops, describe(encoding, target, ops));
}

inline void expect_kernel_batch_invariant(const DotKernel& kernel, const Operands& ops, const std::string& what) {
  float single[kMaxTileRows][kMaxTileTokens];
  for (int r = 0; r < kMaxTileRows; ++r)
    for (int t = 0; t < kMaxTileTokens; ++t) single[r][t] = run_tile(kernel, ops, r, 1, t, 1)[0];
  for (int rows = 1; rows <= kMaxTileRows; ++rows) {
    for (int tokens = 1; tokens <= kMaxTileTokens; ++tokens) {
      for (int row0 = 0; row0 + rows <= kMaxTileRows; ++row0) {
        for (int token0 = 0; token0 + tokens <= kMaxTileTokens; ++token0) {
          const std::vector<float> y = run_tile(kernel, ops, row0, rows, token0, tokens);
          for (int t = 0; t < tokens; ++t)
            for (int r = 0; r < rows; ++r)
              ASSERT_EQ(std::bit_cast<uint32_t>(y[t * rows + r]), std::bit_cast<uint32_t>(single[row0 + r][token0 + t]))
                  << what << " tile " << rows << "x" << tokens << " at (" << row0 << "," << token0 << ") pair (" << r
                  << "," << t << ")";
        }
      }
    }
  }
}

// Every tile shape at every position gives each pair the bits of the 1x1
// tile of that pair, for target's own kernel for `encoding` (if any).
inline void expect_tiles_batch_invariant(Encoding encoding, CpuTarget target, const Operands& ops) {
  const DotKernel kernel = find_dot_kernel(encoding, target);
  if (kernel.tile) expect_kernel_batch_invariant(kernel, ops, describe(encoding, target, ops));
}

// A 3x2 tile into a 6-wide output leaves every other output as it was, for
// target's own kernel for `encoding` (if any).
inline void expect_tiles_write_only_their_outputs(Encoding encoding, CpuTarget target, const Operands& ops) {
  constexpr int kRows = 3, kTokens = 2;
  constexpr int64_t kYStride = 6;
  const DotKernel kernel = find_dot_kernel(encoding, target);
  if (!kernel.tile) return;
  std::vector<float> y(kMaxTileTokens * kYStride, -7.0f);
  kernel.tile(ops.row(0), ops.w_stride, kRows, ops.token(0), ops.x_stride, kTokens, ops.n, y.data(), kYStride);
  for (int t = 0; t < kMaxTileTokens; ++t) {
    for (int r = 0; r < kYStride; ++r) {
      if (t < kTokens && r < kRows) continue;
      EXPECT_EQ(y[t * kYStride + r], -7.0f) << describe(encoding, target, ops) << " y[" << t << "][" << r << "]";
    }
  }
}

// The kernel's `product` (its panel or wide tile) of `rows` rows (n
// elements, random weights of `encoding`) against `tokens` random activation
// rows gives every pair the bits of the 1x1 tile and leaves the rest of y
// alone, for target's kernel if it has that product.
inline void expect_pairs_match_tile(Encoding encoding, CpuTarget target, DotTile DotKernel::*product, int rows,
                                    int tokens, int64_t n) {
  const DotKernel kernel = find_dot_kernel(encoding, target);
  if (!(kernel.*product)) return;
  std::mt19937 rng(static_cast<uint32_t>(rows * 1000 + tokens));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const uint64_t w_stride = row_bytes(encoding, n) + 5;
  std::vector<uint8_t> w(rows * w_stride, 0xee);
  std::vector<float> values(n);
  for (int r = 0; r < rows; ++r) {
    for (float& v : values) v = uniform(rng);
    values[(r * 37) % n] = 60.0f;  // an outlier
    quantize_row(encoding, values.data(), w.data() + r * w_stride, n);
  }
  const int64_t y_stride = rows + 3;
  const uint64_t x_stride = activation_row_bytes(kernel.activation, n) + 9;
  std::vector<uint8_t> x(tokens * x_stride, 0xee);
  for (int t = 0; t < tokens; ++t) {
    for (float& v : values) v = 3.0f * uniform(rng);
    quantize_activation_row(kernel.activation, values.data(), n, x.data() + t * x_stride);
  }
  std::vector<float> y(tokens * y_stride + 1, -7.0f);
  (kernel.*product)(w.data(), w_stride, rows, x.data(), x_stride, tokens, n, y.data(), y_stride);
  for (int t = 0; t < tokens; ++t) {
    for (int r = 0; r < y_stride; ++r) {
      const float got = y[t * y_stride + r];
      if (r >= rows) {
        ASSERT_EQ(got, -7.0f) << to_string(target) << " wrote y[" << t << "][" << r << "]";
        continue;
      }
      float single = 0.0f;
      kernel.tile(w.data() + r * w_stride, w_stride, 1, x.data() + t * x_stride, x_stride, 1, n, &single, 1);
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(single))
          << to_string(target) << " " << encoding_info(encoding).name << " " << rows
          << "x" << tokens << " n=" << n << " pair (" << r << "," << t << ")";
    }
  }
  ASSERT_EQ(y.back(), -7.0f) << to_string(target);
}

inline void expect_panel_matches_tile(Encoding encoding, CpuTarget target, int rows, int tokens, int64_t n) {
  expect_pairs_match_tile(encoding, target, &DotKernel::panel, rows, tokens, n);
}

inline void expect_wide_tile_matches_tile(Encoding encoding, CpuTarget target, int rows, int64_t n) {
  expect_pairs_match_tile(encoding, target, &DotKernel::wide_tile, rows, kWideTileTokens, n);
}

// The kernel's matrix-vector product (where it has one) over `rows` rows
// (a multiple of its pass) of n elements, with the matrix ending exactly
// at its last row (so a read past it would be caught by ASan): every row
// has the tile's bits and nothing past y[rows) is written; for target's
// kernel if it has a matrix-vector product.
inline void expect_matvec_matches_tile(Encoding encoding, CpuTarget target, int64_t rows, int64_t n) {
  const DotKernel kernel = find_dot_kernel(encoding, target);
  if (!kernel.matvec) return;
  std::mt19937 rng(static_cast<uint32_t>(rows * 1000 + n));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const uint64_t w_stride = row_bytes(encoding, n);
  std::vector<uint8_t> w(rows * w_stride);
  std::vector<float> values(n);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : values) v = uniform(rng);
    values[(r * 37) % n] = 60.0f;  // an outlier
    quantize_row(encoding, values.data(), w.data() + r * w_stride, n);
  }
  ASSERT_EQ(rows % kernel.matvec_rows, 0);
  std::vector<uint8_t> x(activation_row_bytes(kernel.activation, n));
  for (float& v : values) v = 3.0f * uniform(rng);
  quantize_activation_row(kernel.activation, values.data(), n, x.data());
  std::vector<float> y(rows + 1, -7.0f);
  kernel.matvec(w.data(), w_stride, rows, x.data(), n, y.data());
  for (int64_t r = 0; r < rows; ++r) {
    float single = 0.0f;
    kernel.tile(w.data() + r * w_stride, w_stride, 1, x.data(), 0, 1, n, &single, 1);
    ASSERT_EQ(std::bit_cast<uint32_t>(y[r]), std::bit_cast<uint32_t>(single))
        << to_string(target) << " " << encoding_info(encoding).name << " matvec " << rows
        << " rows n=" << n << " row " << r;
  }
  ASSERT_EQ(y.back(), -7.0f) << to_string(target);
}

}  // namespace synapse::cpu::dot_test
