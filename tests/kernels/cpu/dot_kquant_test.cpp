// Q4_K / Q5_K / Q6_K dot tiles on each CPU target (a test per target): results
// against a double-precision reference over the dequantized rows (quantized
// data and raw random blocks with extreme levels, scales and activations),
// and batch invariance (a pair's float is the same bits in every tile).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "encoding/encoding.h"
#include "encoding/fp16.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/dot_kernel.h"
#include "kernels/cpu/dot_test_support.h"
#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using DotKquantKernel = target_test::PerCpuTarget;
using DotKquantTile = target_test::PerCpuTarget;
using DotKquantPanel = target_test::PerCpuTarget;
using DotKquantMatvec = target_test::PerCpuTarget;

constexpr int64_t kSuper = 256;
constexpr Encoding kKquantEncodings[] = {Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};
constexpr int64_t kLengths[] = {256, 512, 768, 4864};

// How the operands are made: through the quantizers from random floats, or
// as random bytes (every level and scale pattern, Q6_K scales of -128,
// activations of +-127) with sane fp16 scales.
enum class Fill { Quantized, RawBytes };

using dot_test::Operands;

void put_half(uint8_t* p, float value) {
  const uint16_t h = fp32_to_fp16(value);
  std::memcpy(p, &h, sizeof(h));
}

// Random block bytes with the fp16 fields set to small positive scales.
void fill_raw_weight_row(Encoding encoding, std::mt19937& rng, uint8_t* row, int64_t n) {
  std::uniform_int_distribution<int> byte(0, 255);
  const uint64_t bytes = row_bytes(encoding, n);
  for (uint64_t i = 0; i < bytes; ++i) row[i] = static_cast<uint8_t>(byte(rng));
  const uint64_t block_bytes = bytes / (n / kSuper);
  for (uint8_t* block = row; block < row + bytes; block += block_bytes) {
    if (encoding == Encoding::Q6_K) {
      put_half(block + 208, 0.0123f);
    } else {
      put_half(block, 0.0231f);
      put_half(block + 2, 0.0147f);
    }
  }
}

// Random activation blocks with qs at the int8 extremes half the time.
void fill_raw_activation_row(std::mt19937& rng, uint8_t* row, int64_t n) {
  std::uniform_int_distribution<int> level(-127, 127);
  std::bernoulli_distribution extreme(0.5);
  for (int64_t b = 0; b < n / kSuper; ++b) {
    ActQ8KBlock block;
    block.d = 0.0371f;
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 16 * j; i < 16 * (j + 1); ++i) {
        const int q = level(rng);
        block.qs[i] = static_cast<int8_t>(extreme(rng) ? (q < 0 ? -127 : 127) : q);
        sum += block.qs[i];
      }
      block.bsums[j] = static_cast<int16_t>(sum);
    }
    std::memcpy(row + b * sizeof(block), &block, sizeof(block));
  }
}

Operands make_kquant_operands(Encoding encoding, int64_t n, Fill fill, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Operands ops =
      dot_test::allocate_operands(n, row_bytes(encoding, n) + 7, activation_row_bytes(ActivationFormat::Q8K, n) + 12);
  std::vector<float> values(n);
  for (int r = 0; r < kMaxTileRows; ++r) {
    if (fill == Fill::RawBytes) {
      fill_raw_weight_row(encoding, rng, ops.row(r), n);
    } else {
      for (float& v : values) v = 0.3f * normal(rng) + 0.1f * r;  // rows with an offset exercise the mins
      if (n > kSuper) std::fill(values.begin() + kSuper, values.begin() + 2 * kSuper, 0.0f);  // all-zero super-block
      values[(r * 97 + 5) % n] = 25.0f;                                                      // an outlier
      quantize_row(encoding, values.data(), ops.row(r), n);
    }
    dot_test::record_weight_row(ops, encoding, r);
  }
  for (int t = 0; t < kMaxTileTokens; ++t) {
    if (fill == Fill::RawBytes) {
      fill_raw_activation_row(rng, ops.token(t), n);
    } else {
      for (float& v : values) v = 2.0f * normal(rng);
      quantize_activation_row(ActivationFormat::Q8K, values.data(), n, ops.token(t));
    }
    dot_test::record_block_activation_row<ActQ8KBlock>(ops, t);
  }
  return ops;
}

// Every tile shape against the double reference, for every length.
void expect_matches_reference(Encoding encoding, CpuTarget target, Fill fill) {
  for (int64_t n : kLengths)
    dot_test::expect_tiles_match_reference(encoding, target,
                                           make_kquant_operands(encoding, n, fill, static_cast<uint32_t>(n) + 17));
}

TEST(DotKquantKernel, ServesQ4KQ5KQ6KWithQ8KActivationsOnEveryTarget) {
  for (Encoding encoding : kKquantEncodings) {
    for (CpuTarget target : target_test::kCpuTargets) {
      const DotKernel kernel = best_dot_kernel(encoding, target);
      ASSERT_NE(kernel.tile, nullptr) << to_string(target);
      EXPECT_EQ(kernel.activation, ActivationFormat::Q8K);
    }
    for (CpuTarget target : {CpuTarget::Scalar, CpuTarget::Avx2, CpuTarget::Avx512Vnni})
      EXPECT_NE(find_kquant_dot_kernel(encoding, target).tile, nullptr) << to_string(target);
    // Plain AVX-512 adds nothing here: it falls back to the AVX2 tile.
    EXPECT_EQ(best_dot_kernel(encoding, CpuTarget::Avx512).tile, find_dot_kernel(encoding, CpuTarget::Avx2).tile);
  }
  EXPECT_EQ(find_kquant_dot_kernel(Encoding::Q8_0, CpuTarget::Scalar).tile, nullptr);
  EXPECT_EQ(find_kquant_dot_kernel(Encoding::Q3_K, CpuTarget::Avx2).tile, nullptr);
}

TEST_P(DotKquantKernel, Q4KMatchesDoubleReferenceOnEveryShape) {
  expect_matches_reference(Encoding::Q4_K, GetParam(), Fill::Quantized);
}

TEST_P(DotKquantKernel, Q5KMatchesDoubleReferenceOnEveryShape) {
  expect_matches_reference(Encoding::Q5_K, GetParam(), Fill::Quantized);
}

TEST_P(DotKquantKernel, Q6KMatchesDoubleReferenceOnEveryShape) {
  expect_matches_reference(Encoding::Q6_K, GetParam(), Fill::Quantized);
}

TEST_P(DotKquantKernel, RawBlocksWithExtremeLevelsAndActivationsMatchDoubleReference) {
  for (Encoding encoding : kKquantEncodings) expect_matches_reference(encoding, GetParam(), Fill::RawBytes);
}

TEST_P(DotKquantTile, EveryTileShapeAndPositionGivesTheBitsOfASinglePair) {
  for (Encoding encoding : kKquantEncodings)
    for (int64_t n : {768, 4864})
      dot_test::expect_tiles_batch_invariant(encoding, GetParam(), make_kquant_operands(encoding, n, Fill::Quantized, 1234));
}

// The AVX-512 VNNI Q4_K / Q5_K tiles take the scalar tile's float steps on
// the same exact integer sums, so they agree with it bit for bit.
TEST(DotKquantTile, VnniQ4KAndQ5KTilesHaveTheBitsOfTheScalarTile) {
  SYNAPSE_SKIP_UNLESS_CPU_RUNS(CpuTarget::Avx512Vnni);
  for (Encoding encoding : {Encoding::Q4_K, Encoding::Q5_K}) {
    for (Fill fill : {Fill::Quantized, Fill::RawBytes}) {
      const Operands ops = make_kquant_operands(encoding, 768, fill, 99);
      const DotKernel vnni = find_dot_kernel(encoding, CpuTarget::Avx512Vnni);
      const DotKernel scalar = find_dot_kernel(encoding, CpuTarget::Scalar);
      for (int rows = 1; rows <= kMaxTileRows; ++rows) {
        for (int tokens = 1; tokens <= kMaxTileTokens; ++tokens) {
          const std::vector<float> got = dot_test::run_tile(vnni, ops, 0, rows, 0, tokens);
          const std::vector<float> want = dot_test::run_tile(scalar, ops, 0, rows, 0, tokens);
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                << rows << "x" << tokens << " output " << i;
        }
      }
    }
  }
}

// Rows past a 32-row panel, token counts past its micro-kernel's groups,
// super-blocks past a repacked chunk: every pair has the tile's bits.
TEST_P(DotKquantPanel, EveryPairHasTheBitsOfTheTileAndNothingElseIsWritten) {
  // The AVX-512 VNNI target has a panel for each of these, and no wide tile
  // (a panel in the wide tile's place repacked its rows every 8 tokens).
  if (GetParam() == CpuTarget::Avx512Vnni) {
    for (Encoding encoding : {Encoding::Q4_K, Encoding::Q6_K}) {
      const DotKernel kernel = find_dot_kernel(encoding, GetParam());
      ASSERT_TRUE(kernel.panel) << encoding_info(encoding).name;
      EXPECT_FALSE(kernel.wide_tile) << encoding_info(encoding).name;
    }
  }
  for (int rows : {1, 5, 16, 17, 32})
    for (int tokens : {1, 3, 4, 7, 16, 21})
      for (int64_t n : {int64_t{256}, int64_t{1280}})
        for (Encoding encoding : {Encoding::Q4_K, Encoding::Q6_K})
          dot_test::expect_panel_matches_tile(encoding, GetParam(), rows, tokens, n);
}

// One and several passes, rows of one super-block up to rows past the
// matvec's prepared chunk (32 super-blocks), short rows (prefetching the
// next pass) and long ones: every row has the tile's bits.
TEST_P(DotKquantMatvec, EveryRowHasTheBitsOfTheTile) {
  for (Encoding encoding : kKquantEncodings) {
    // The AVX-512 VNNI target has one for each of these encodings.
    if (GetParam() == CpuTarget::Avx512Vnni) {
      ASSERT_TRUE(find_dot_kernel(encoding, GetParam()).matvec);
    }
    for (int64_t rows : {8, 24})
      for (int64_t n : {256, 512, 256 * 7, 256 * 32, 256 * 33, 256 * 70})
        dot_test::expect_matvec_matches_tile(encoding, GetParam(), rows, n);
  }
}

TEST_P(DotKquantTile, WritesOnlyItsRowsAndTokens) {
  for (Encoding encoding : kKquantEncodings)
    dot_test::expect_tiles_write_only_their_outputs(encoding, GetParam(), make_kquant_operands(encoding, 512, Fill::Quantized, 5));
}

SYNAPSE_PER_CPU_TARGET(DotKquantKernel);
SYNAPSE_PER_CPU_TARGET(DotKquantTile);
SYNAPSE_PER_CPU_TARGET(DotKquantPanel);
SYNAPSE_PER_CPU_TARGET(DotKquantMatvec);

}  // namespace
}  // namespace synapse::cpu
