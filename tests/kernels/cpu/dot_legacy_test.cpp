// Q8_0 / Q4_0 / Q5_0 dot tiles on each CPU target (a test per target):
// results against a double-precision reference over the dequantized rows,
// and batch invariance (a pair's float is the same bits whatever tile
// computes it).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/dot_kernel.h"
#include "kernels/cpu/dot_test_support.h"
#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using DotLegacyKernel = target_test::PerCpuTarget;
using DotLegacyTile = target_test::PerCpuTarget;
using DotLegacyPanel = target_test::PerCpuTarget;
using DotLegacyMatvec = target_test::PerCpuTarget;

constexpr int kBlock = 32;
constexpr Encoding kLegacyEncodings[] = {Encoding::Q8_0, Encoding::Q4_0, Encoding::Q5_0};
// The encodings with a panel and a matrix-vector kernel too.
constexpr Encoding kFastEncodings[] = {Encoding::Q8_0, Encoding::Q4_0};

using dot_test::Operands;

// Quantized weights with an all-zero block, an outlier and (Q8_0) a -128.
Operands make_legacy_operands(Encoding encoding, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Operands ops =
      dot_test::allocate_operands(n, row_bytes(encoding, n) + 7, activation_row_bytes(ActivationFormat::Q8, n) + 12);
  std::vector<float> values(n);
  for (int r = 0; r < kMaxTileRows; ++r) {
    for (float& v : values) v = uniform(rng);
    if (n > kBlock) std::fill(values.begin() + kBlock, values.begin() + 2 * kBlock, 0.0f);  // an all-zero block
    values[(r * 37) % n] = 60.0f;                                                           // an outlier
    quantize_row(encoding, values.data(), ops.row(r), n);
    // Q8_0 allows -128, which ggml's quantizer never writes; the tiles must still read it right.
    if (encoding == Encoding::Q8_0) ops.row(r)[2 + 3] = static_cast<uint8_t>(-128);
    dot_test::record_weight_row(ops, encoding, r);
  }
  for (int t = 0; t < kMaxTileTokens; ++t) {
    for (float& v : values) v = 3.0f * uniform(rng);
    quantize_activation_row(ActivationFormat::Q8, values.data(), n, ops.token(t));
    dot_test::record_block_activation_row<ActQ8Block>(ops, t);
  }
  return ops;
}

TEST(DotLegacyKernel, ServesQ8_0Q4_0AndQ5_0WithQ8ActivationsOnEveryTarget) {
  for (Encoding encoding : kLegacyEncodings) {
    for (CpuTarget target : target_test::kCpuTargets) {
      const DotKernel kernel = best_dot_kernel(encoding, target);
      ASSERT_NE(kernel.tile, nullptr) << to_string(target);
      EXPECT_EQ(kernel.activation, ActivationFormat::Q8);
    }
    EXPECT_NE(find_legacy_dot_kernel(encoding, CpuTarget::Scalar).tile, nullptr);
  }
  EXPECT_EQ(find_legacy_dot_kernel(Encoding::Q4_1, CpuTarget::Scalar).tile, nullptr);
  EXPECT_EQ(find_legacy_dot_kernel(Encoding::Q4_K, CpuTarget::Avx2).tile, nullptr);
}

TEST_P(DotLegacyKernel, MatchesDoubleReferenceOnEveryShape) {
  for (Encoding encoding : kLegacyEncodings)
    for (int64_t n : {32, 64, 96, 160, 4096 + 32})
      dot_test::expect_tiles_match_reference(encoding, GetParam(), make_legacy_operands(encoding, n, static_cast<uint32_t>(n)));
}

TEST_P(DotLegacyTile, EveryTileShapeAndPositionGivesTheBitsOfASinglePair) {
  for (Encoding encoding : kLegacyEncodings)
    for (int64_t n : {64, 96, 4096 + 32})
      dot_test::expect_tiles_batch_invariant(encoding, GetParam(), make_legacy_operands(encoding, n, 1234));
}

TEST_P(DotLegacyTile, WritesOnlyItsRowsAndTokens) {
  for (Encoding encoding : {Encoding::Q4_0, Encoding::Q5_0})
    dot_test::expect_tiles_write_only_their_outputs(encoding, GetParam(), make_legacy_operands(encoding, 64, 5));
}

// Rows past a 32-row panel, token counts past its 6-token groups, blocks
// past its 16-block chunks.
TEST_P(DotLegacyPanel, EveryPairHasTheBitsOfTheTileAndNothingElseIsWritten) {
  for (Encoding encoding : kFastEncodings) {
    // The AVX-512 VNNI target has a panel for each of these.
    if (GetParam() == CpuTarget::Avx512Vnni) {
      ASSERT_TRUE(find_dot_kernel(encoding, GetParam()).panel) << encoding_info(encoding).name;
    }
    for (auto [rows, tokens] : {std::pair{32, 6}, {1, 1}, {7, 13}, {17, 5}, {29, 20}})
      for (int64_t n : {64, 32 * 19})
        dot_test::expect_panel_matches_tile(encoding, GetParam(), rows, tokens, n);
  }
}

// Eight tokens in one call: every row count of a tile, one block and
// several (odd and even counts).
TEST_P(DotLegacyPanel, WideTileGivesEveryPairTheBitsOfTheTile) {
  for (Encoding encoding : {Encoding::Q8_0, Encoding::Q5_0}) {
    if (GetParam() == CpuTarget::Avx512Vnni) {
      ASSERT_TRUE(find_dot_kernel(encoding, GetParam()).wide_tile);
    }
    for (int rows = 1; rows <= kMaxTileRows; ++rows)
      for (int64_t n : {32, 64, 32 * 19}) dot_test::expect_wide_tile_matches_tile(encoding, GetParam(), rows, n);
  }
}

// One and several passes; odd and even block counts; rows longer than the
// activation steps the kernel prepares at a time (256 block pairs).
TEST_P(DotLegacyMatvec, EveryRowHasTheBitsOfTheTile) {
  for (Encoding encoding : kFastEncodings) {
    // The AVX-512 VNNI target has one for each of these encodings.
    if (GetParam() == CpuTarget::Avx512Vnni) {
      ASSERT_TRUE(find_dot_kernel(encoding, GetParam()).matvec);
    }
    for (int64_t rows : {8, 24})
      for (int64_t n : {32, 64, 32 * 4, 32 * 6, 32 * 19, 32 * 513, 32 * 1024})
        dot_test::expect_matvec_matches_tile(encoding, GetParam(), rows, n);
  }
}

// Rows 300 MiB apart (a pass spans more than 2 GiB, beyond any int32
// offset): a reserved, mostly untouched mapping holds them.
TEST_P(DotLegacyMatvec, PassesWiderThan2GiBHaveTheBitsOfTheTile) {
  constexpr int64_t kRows = 8, kCols = 96;
  constexpr uint64_t kStride = uint64_t{300} << 20;
  void* mapped = ::mmap(nullptr, kRows * kStride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* w = static_cast<uint8_t*>(mapped);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(kCols);
  std::vector<uint8_t> x(activation_row_bytes(ActivationFormat::Q8, kCols));
  for (float& v : values) v = uniform(rng);
  quantize_activation_row(ActivationFormat::Q8, values.data(), kCols, x.data());
  for (Encoding encoding : kFastEncodings) {
    const DotKernel kernel = find_dot_kernel(encoding, GetParam());
    if (!kernel.matvec) continue;
    for (int64_t r = 0; r < kRows; ++r) {
      for (float& v : values) v = uniform(rng);
      quantize_row(encoding, values.data(), w + r * kStride, kCols);
    }
    std::vector<float> y(kRows);
    kernel.matvec(w, kStride, kRows, x.data(), kCols, y.data());
    for (int64_t r = 0; r < kRows; ++r) {
      float single = 0.0f;
      kernel.tile(w + r * kStride, kStride, 1, x.data(), 0, 1, kCols, &single, 1);
      EXPECT_EQ(std::bit_cast<uint32_t>(y[r]), std::bit_cast<uint32_t>(single)) << encoding_info(encoding).name << " row " << r;
    }
  }
  ::munmap(mapped, kRows * kStride);
}

TEST_P(DotLegacyTile, LeavesTheOutputAloneForShapesBeyondTheTile) {
  const Operands ops = make_legacy_operands(Encoding::Q8_0, 32, 6);
  const CpuTarget target = GetParam();
  const DotKernel kernel = find_dot_kernel(Encoding::Q8_0, target);
  if (!kernel.tile) return;  // none of its own: nothing to check
  for (auto [rows, tokens] : {std::pair{0, 1}, {kMaxTileRows + 1, 1}, {1, 0}, {1, kMaxTileTokens + 1}}) {
    std::vector<float> y(64, -7.0f);
    kernel.tile(ops.row(0), 0, rows, ops.token(0), 0, tokens, ops.n, y.data(), 8);
    EXPECT_EQ(std::count(y.begin(), y.end(), -7.0f), 64) << to_string(target) << " " << rows << "x" << tokens;
  }
}

SYNAPSE_PER_CPU_TARGET(DotLegacyKernel);
SYNAPSE_PER_CPU_TARGET(DotLegacyTile);
SYNAPSE_PER_CPU_TARGET(DotLegacyPanel);
SYNAPSE_PER_CPU_TARGET(DotLegacyMatvec);

}  // namespace
}  // namespace synapse::cpu
