// The SIMD K-quant encoders on each CPU target (a test per target) against
// the reference codecs, byte for byte: random rows, and blocks built from
// adversarial pieces (zeros, constants, outliers, rounding ties, magnitudes
// from denormal to 1e30, non-finite values). Rows of 1 to 9 blocks cover
// the partly filled groups of sub-blocks the encoders fit together.
#include "kernels/cpu/kquant_encode.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/per_cpu_target.h"
#include "synapse/error.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kBlockElems = 256;
constexpr int kPiece = 16;  // the smallest sub-block (Q6_K); Q4_K / Q5_K sub-blocks are two pieces

struct Format {
  Encoding encoding;
  codecs::QuantizeFn reference;
  codecs::QuantizeFn (*fast)(CpuTarget);
};
const Format kFormats[] = {{Encoding::Q4_K, codecs::quantize_q4_k, q4_k_encoder},
                           {Encoding::Q5_K, codecs::quantize_q5_k, q5_k_encoder},
                           {Encoding::Q6_K, codecs::quantize_q6_k, q6_k_encoder}};

// The index of the first block whose bytes differ, or -1.
int64_t first_differing_block(const Format& f, CpuTarget target, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  const uint64_t block_bytes = encoding_info(f.encoding).block_bytes;
  std::vector<uint8_t> want(row_bytes(f.encoding, n), 0xa5), got(want.size(), 0x5a);
  f.reference(x.data(), want.data(), n / kBlockElems);
  f.fast(target)(x.data(), got.data(), n / kBlockElems);
  for (uint64_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) return static_cast<int64_t>(i / block_bytes);
  return -1;
}

void expect_reference_bytes(CpuTarget target, const std::vector<float>& x, const std::string& what) {
  for (const Format& f : kFormats) {
    const int64_t block = first_differing_block(f, target, x);
    EXPECT_EQ(block, -1) << encoding_info(f.encoding).name << " on " << to_string(target) << ", " << what
                         << ": block " << block << " differs";
  }
}

// Pieces of 16 values that stress one part of the encoders.
enum class Piece {
  Normal, Zeros, Constant, NegativeConstant, Outlier, TiesQ4K, TiesQ5K, TiesQ6K, Tiny, NearZeroEps, MixedSigns,
  Huge, Denormal, AllPositive, Sparse, TwoValues, Count
};
constexpr int kPieceKinds = static_cast<int>(Piece::Count);

void fill_piece(Piece kind, std::mt19937& rng, float* out) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> small_int(0, 31);
  for (int i = 0; i < kPiece; ++i) {
    float v = 0.0f;
    switch (kind) {
      case Piece::Normal: v = 0.02f * normal(rng); break;
      case Piece::Zeros: v = 0.0f; break;
      case Piece::Constant: v = 0.375f; break;
      case Piece::NegativeConstant: v = -0.625f; break;
      case Piece::Outlier: v = i == 7 ? 1e4f : 0.01f * normal(rng); break;
      // The first grid has inverse scale 1 (nmax / (max - min) for Q4_K
      // and Q5_K, -32 / max for Q6_K), so values k + 0.5 tie exactly
      // between two of its levels.
      case Piece::TiesQ4K: v = i == 0 ? 0.0f : i == 1 ? 15.0f : static_cast<float>(small_int(rng) % 15) + 0.5f;
        break;
      case Piece::TiesQ5K: v = i == 0 ? 0.0f : i == 1 ? 31.0f : static_cast<float>(small_int(rng) % 31) + 0.5f;
        break;
      case Piece::TiesQ6K:
        v = i == 0 ? -32.0f : (i % 2 ? 1.0f : -1.0f) * (static_cast<float>(small_int(rng) % 31) + 0.5f);
        break;
      case Piece::Tiny: v = 1e-12f * normal(rng); break;
      case Piece::NearZeroEps: v = (i % 2 ? 1.0f : -1.0f) * (i == 3 ? 1.0001e-15f : 0.9e-15f); break;
      case Piece::MixedSigns: v = (i % 2 ? 1.0f : -1.0f) * std::ldexp(1.0f + 0.03f * i, (i % 7) - 3); break;
      case Piece::Huge: v = 1e30f * normal(rng); break;
      case Piece::Denormal: v = std::numeric_limits<float>::denorm_min() * static_cast<float>(small_int(rng) - 15);
        break;
      case Piece::AllPositive: v = 0.5f + std::fabs(normal(rng)); break;
      case Piece::Sparse: v = i % 5 == 0 ? normal(rng) : 0.0f; break;
      case Piece::TwoValues: v = i % 2 ? 0.25f : -0.75f; break;
      case Piece::Count: break;
    }
    out[i] = v;
  }
}

std::vector<float> normal_row(int64_t n_blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> spread(-6.0f, 2.0f);  // the sub-blocks' scales differ
  std::vector<float> x(n_blocks * kBlockElems);
  for (size_t i = 0; i < x.size(); i += 32) {
    const float scale = std::exp2(spread(rng));
    for (size_t j = i; j < i + 32; ++j) x[j] = scale * normal(rng);
  }
  return x;
}

using KQuantEncodeOnTarget = target_test::PerCpuTarget;

TEST(KQuantEncoders, EveryTargetHasAllThree) {
  for (CpuTarget target : target_test::kCpuTargets) {
    const KQuantEncoders e = kquant_encoders(target);
    EXPECT_TRUE(e.q4_k && e.q5_k && e.q6_k) << to_string(target);
  }
}

// encode_row writes synapse::quantize_row's bytes in every encoding
// with a codec, and throws its error for a row that is not whole blocks.
TEST(KQuantEncoders, EncodeRowEqualsQuantizeRowInEveryEncoding) {
  const std::vector<float> x = normal_row(3, 7);
  const auto n = static_cast<int64_t>(x.size());
  for (Encoding e : {Encoding::F32, Encoding::F16, Encoding::Q8_0, Encoding::Q4_0, Encoding::Q4_K, Encoding::Q5_K,
                     Encoding::Q6_K}) {
    std::vector<uint8_t> want(row_bytes(e, n), 0xa5), got(want.size(), 0x5a);
    synapse::quantize_row(e, x.data(), want.data(), n);
    encode_row(e, x.data(), got.data(), n);
    EXPECT_EQ(want, got) << encoding_info(e).name;
  }
  std::vector<uint8_t> out(row_bytes(Encoding::Q4_K, kBlockElems));
  EXPECT_THROW(encode_row(Encoding::Q4_K, x.data(), out.data(), 100), Error);
}

TEST_P(KQuantEncodeOnTarget, RandomRowsEqualReferenceBytes) {
  for (int64_t n_blocks = 1; n_blocks <= 9; ++n_blocks) {
    for (uint32_t seed = 0; seed < 8; ++seed)
      expect_reference_bytes(GetParam(), normal_row(n_blocks, 100 * n_blocks + seed),
                             std::to_string(n_blocks) + " blocks, seed " + std::to_string(seed));
  }
}

// Every piece kind alone, and mixed at random with the others and with
// normal data (a block's scale codes couple its sub-blocks).
TEST_P(KQuantEncodeOnTarget, AdversarialPiecesEqualReferenceBytes) {
  std::mt19937 rng(5);
  for (int kind = 0; kind < kPieceKinds; ++kind) {
    std::vector<float> x(5 * kBlockElems);
    for (size_t p = 0; p < x.size(); p += kPiece) fill_piece(static_cast<Piece>(kind), rng, x.data() + p);
    expect_reference_bytes(GetParam(), x, "piece kind " + std::to_string(kind));
  }
  std::uniform_int_distribution<int> any_kind(0, kPieceKinds - 1);
  for (int round = 0; round < 40; ++round) {
    std::vector<float> x(7 * kBlockElems);
    for (size_t p = 0; p < x.size(); p += kPiece) fill_piece(static_cast<Piece>(any_kind(rng)), rng, x.data() + p);
    expect_reference_bytes(GetParam(), x, "mixed pieces, round " + std::to_string(round));
  }
}

// Magnitudes so small that d rounds to 0 in fp16: no level is requantized,
// so the bytes hold the fitted levels of every sub-block.
TEST_P(KQuantEncodeOnTarget, TinyBlocksKeepTheFittedLevels) {
  for (const float magnitude : {1e-9f, 1e-10f, 3e-12f}) {
    std::vector<float> x = normal_row(9, 77);
    for (float& v : x) v *= magnitude;
    for (const Format& f : kFormats) {
      std::vector<uint8_t> out(row_bytes(f.encoding, static_cast<int64_t>(x.size())));
      f.reference(x.data(), out.data(), 9);
      std::vector<float> decoded(x.size());
      dequantize_row(f.encoding, out.data(), decoded.data(), static_cast<int64_t>(x.size()));
      for (float v : decoded) ASSERT_EQ(v, 0.0f) << encoding_info(f.encoding).name << ": d is not 0";
    }
    expect_reference_bytes(GetParam(), x, "magnitude " + std::to_string(magnitude));
  }
}

// NaN and infinities have no meaningful encoding, but must not crash or
// read out of bounds; the encoders' float operations are the reference's,
// so the bytes agree too.
TEST_P(KQuantEncodeOnTarget, NonFiniteInputsEqualReferenceBytes) {
  const float kNonFinite[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  for (const float bad : kNonFinite) {
    for (const int64_t at : {0, 5, 31, 32, 200, 255}) {
      std::vector<float> x = normal_row(2, 9);
      x[at] = bad;
      x[kBlockElems + at / 2] = bad;
      expect_reference_bytes(GetParam(), x, std::to_string(bad) + " at " + std::to_string(at));
    }
    std::vector<float> all_bad(kBlockElems, bad);
    expect_reference_bytes(GetParam(), all_bad, "all " + std::to_string(bad));
  }
}

SYNAPSE_PER_CPU_TARGET(KQuantEncodeOnTarget);

}  // namespace
}  // namespace synapse::cpu
