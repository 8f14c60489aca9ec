// The threaded CPU matrix product against the reference matmul, for every
// encoding with a CPU kernel and every dispatch target (a test per encoding
// and target), and its batch and thread invariance.
#include "kernels/cpu/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/cpu/per_cpu_target.h"
#include "encoding/encoding.h"

namespace synapse::cpu {
namespace {

const Encoding kMatmulEncodings[] = {Encoding::F32,  Encoding::F16,  Encoding::BF16, Encoding::Q8_0,
                               Encoding::Q4_0, Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};

struct Matrix {
  std::vector<uint8_t> bytes;
  ref::EncodedMatrix view;
};

Matrix random_matrix(Encoding encoding, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m;
  const uint64_t stride = row_bytes(encoding, static_cast<uint64_t>(cols));
  m.bytes.resize(stride * static_cast<uint64_t>(rows));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = normal(rng);
    if (r == 1) row[3] = 40.0f;  // an outlier
    if (r == 2) std::fill(row.begin(), row.end(), 0.0f);
    quantize_row(encoding, row.data(), m.bytes.data() + r * stride, cols);
  }
  m.view = {encoding, m.bytes.data(), rows, cols, stride};
  return m;
}

std::vector<float> random_activations(int64_t tokens, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(tokens * cols));
  for (float& v : x) v = normal(rng);
  return x;
}

// The largest error quantizing x to the kernel's int8 blocks can cause in
// y[t, o]: every activation moves by at most half a step (max|block| / 254)
// plus the scale's rounding to fp16 (at most max|block| / 2048).
double quantization_bound(const DotKernel& kernel, const float* x, const float* w_row, int64_t cols) {
  const int64_t block = activation_block_elems(kernel.activation);
  if (block == 1) return 0.0;
  double bound = 0.0;
  for (int64_t b = 0; b < cols; b += block) {
    float amax = 0.0f;
    for (int64_t i = b; i < b + block; ++i) amax = std::max(amax, std::fabs(x[i]));
    for (int64_t i = b; i < b + block; ++i) bound += std::fabs(w_row[i]) * amax * (1.0 / 254.0 + 1.0 / 2048.0);
  }
  return bound;
}

struct Case {
  int64_t rows;
  int64_t cols;
  int64_t tokens;
};

// One test per encoding and target; a target this CPU lacks skips.
class CpuMatmul : public ::testing::TestWithParam<std::tuple<Encoding, CpuTarget>> {
 protected:
  void SetUp() override { SYNAPSE_SKIP_UNLESS_CPU_RUNS(std::get<1>(GetParam())); }
};

TEST_P(CpuMatmul, MatchesReferenceWithinQuantizationBound) {
  const auto [encoding, target] = GetParam();
  const int64_t block = encoding_info(encoding).block_elems;
  const int64_t unit = std::max<int64_t>(block, 32);
  std::mt19937 rng(7);
  for (const Case c : {Case{7, unit, 1}, Case{13, 3 * unit, 5}, Case{4, 5 * unit, 9}, Case{33, unit * 2, 70}}) {
    const Matrix w = random_matrix(encoding, c.rows, c.cols, rng);
    const std::vector<float> x = random_activations(c.tokens, c.cols, rng);
    std::vector<float> bias(static_cast<size_t>(c.rows));
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.25f * static_cast<float>(i);
    std::vector<float> expected(static_cast<size_t>(c.tokens * c.rows)), scratch(static_cast<size_t>(c.cols));
    ref::matmul(x.data(), c.tokens, w.view, bias.data(), expected.data(), scratch.data(), ref::Accumulation::F64);
    std::vector<float> w_rows(static_cast<size_t>(c.rows * c.cols));
    for (int64_t r = 0; r < c.rows; ++r) dequantize_row(encoding, w.view.row(r), &w_rows[r * c.cols], c.cols);

    const DotKernel kernel = best_dot_kernel(encoding, target);
    ASSERT_NE(kernel.tile, nullptr) << to_string(target);
    for (int threads : {1, 3}) {
      ThreadPool pool(threads);
      std::vector<uint8_t> act(matmul_scratch_bytes(c.tokens, c.cols));
      std::vector<float> y(expected.size());
      matmul(x.data(), c.tokens, {&w.view, bias.data(), y.data(), kernel}, act.data(), pool);
      for (int64_t t = 0; t < c.tokens; ++t)
        for (int64_t o = 0; o < c.rows; ++o) {
          const float* x_row = &x[t * c.cols];
          const float* w_row = &w_rows[o * c.cols];
          double magnitude = 0.0;
          for (int64_t i = 0; i < c.cols; ++i) magnitude += std::fabs(double{x_row[i]} * w_row[i]);
          const double bound = quantization_bound(kernel, x_row, w_row, c.cols) * 1.001 + 1e-5 * magnitude + 1e-5;
          EXPECT_NEAR(y[t * c.rows + o], expected[t * c.rows + o], bound)
              << to_string(target) << " threads " << threads << " rows " << c.rows << " cols " << c.cols
              << " token " << t << " row " << o;
        }
    }
  }
}

// Batches through every path (the matrix-vector kernel token after token
// up to matvec_max_tokens, tiles, panels from panel_min_tokens where the
// kernel has them) against one token at a time; the taller matrix has
// several of the matrix-vector kernel's row blocks and rows left for tiles.
TEST_P(CpuMatmul, TokenResultsDoNotDependOnBatchOrThreads) {
  const auto [encoding, target] = GetParam();
  const int64_t cols = std::max<int64_t>(encoding_info(encoding).block_elems, 32) * 3;
  const DotKernel kernel = best_dot_kernel(encoding, target);
  const int64_t panel_from = kernel.panel_min_tokens;
  const int64_t tall = static_cast<int64_t>(2 * kMatvecBlockBytes / row_bytes(encoding, cols)) + 13;
  for (const int64_t tokens : {int64_t{2}, int64_t{kernel.matvec_max_tokens}, std::max<int64_t>(panel_from - 1, 2),
                               panel_from, panel_from + 3, int64_t{9}, int64_t{19}, 2 * panel_from + 9}) {
    for (const int64_t rows : {int64_t{37}, tokens <= kernel.matvec_max_tokens ? tall : int64_t{37}}) {
      std::mt19937 rng(11);
      const Matrix w = random_matrix(encoding, rows, cols, rng);
      const std::vector<float> x = random_activations(tokens, cols, rng);
      std::vector<uint8_t> act(matmul_scratch_bytes(tokens, cols));
      ThreadPool one(1), three(3);
      std::vector<float> batch(static_cast<size_t>(tokens * rows));
      matmul(x.data(), tokens, {&w.view, nullptr, batch.data(), kernel}, act.data(), three);
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<float> single(static_cast<size_t>(rows));
        matmul(&x[t * cols], 1, {&w.view, nullptr, single.data(), kernel}, act.data(), one);
        EXPECT_EQ(0, std::memcmp(single.data(), &batch[t * rows], single.size() * sizeof(float)))
            << to_string(target) << " tokens " << tokens << " rows " << rows << " token " << t;
      }
    }
  }
}

TEST_P(CpuMatmul, GroupedProductsEqualSeparateOnes) {
  const auto [encoding, target] = GetParam();
  const int64_t cols = std::max<int64_t>(encoding_info(encoding).block_elems, 32) * 2;
  const int64_t tokens = 6;
  std::mt19937 rng(13);
  // A second product in another format family exercises two quantizations.
  const Matrix a = random_matrix(encoding, 9, cols, rng);
  const Matrix b = random_matrix(Encoding::Q8_0, 5, cols, rng);
  const std::vector<float> x = random_activations(tokens, cols, rng);
  ThreadPool pool(2);
  std::vector<uint8_t> act(matmul_scratch_bytes(tokens, cols));
  std::vector<float> ya(static_cast<size_t>(tokens * 9)), yb(static_cast<size_t>(tokens * 5));
  std::vector<float> ga(ya.size()), gb(yb.size());
  const MatmulProduct pa{&a.view, nullptr, ya.data(), best_dot_kernel(encoding, target)};
  const MatmulProduct pb{&b.view, nullptr, yb.data(), best_dot_kernel(Encoding::Q8_0, target)};
  matmul(x.data(), tokens, pa, act.data(), pool);
  matmul(x.data(), tokens, pb, act.data(), pool);
  const MatmulProduct group[] = {{&a.view, nullptr, ga.data(), pa.kernel}, {&b.view, nullptr, gb.data(), pb.kernel}};
  matmul_group(x.data(), tokens, group, act.data(), pool);
  EXPECT_EQ(0, std::memcmp(ya.data(), ga.data(), ya.size() * sizeof(float))) << to_string(target);
  EXPECT_EQ(0, std::memcmp(yb.data(), gb.data(), yb.size() * sizeof(float))) << to_string(target);
}

INSTANTIATE_TEST_SUITE_P(EncodingsAndTargets, CpuMatmul,
                         ::testing::Combine(::testing::ValuesIn(kMatmulEncodings),
                                            ::testing::ValuesIn(target_test::kCpuTargets)),
                         [](const auto& info) {
                           return std::string(encoding_info(std::get<0>(info.param)).name) +
                                  "_" + to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace synapse::cpu
