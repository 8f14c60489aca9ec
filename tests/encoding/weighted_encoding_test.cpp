// quantize_row_weighted: ggml's importance-weighted encoders (llama.cpp's
// imatrix path) byte for byte, the encodings that ignore the weights, and
// what the weights do to the error.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "encoding/encoding.h"
#include "encoding/parity_row.h"
#include "support/byte_hash.h"
#include "support/gaussian_row.h"
#include "synapse/error.h"

namespace synapse {
namespace {

constexpr Encoding kWeighted[] = {Encoding::Q4_0, Encoding::Q4_1, Encoding::Q5_0, Encoding::Q5_1,
                                  Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};

std::vector<uint8_t> encode(Encoding e, const std::vector<float>& x, const std::vector<float>* importance) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> out(row_bytes(e, x.size()));
  if (importance != nullptr) {
    quantize_row_weighted(e, x.data(), out.data(), n, importance->data());
  } else {
    quantize_row(e, x.data(), out.data(), n);
  }
  return out;
}

std::vector<float> decode(Encoding e, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> out(n);
  dequantize_row(e, bytes.data(), out.data(), static_cast<int64_t>(n));
  return out;
}

// Squared error of each element of x once encoded.
std::vector<double> squared_errors(Encoding e, const std::vector<float>& x, const std::vector<float>* importance) {
  const std::vector<float> y = decode(e, encode(e, x, importance), x.size());
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
  return out;
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// FNV-1a of what ggml_quantize_chunk writes for parity_row(1024) with
// parity_importance(1024) as its imatrix row, computed with the pinned
// peer's libggml-base (@node-llama-cpp/linux-x64 3.22.1).
TEST(WeightedEncodingGgmlParity, WeightedQuantizersWriteTheSameBytesAsGgml) {
  const std::pair<Encoding, uint64_t> kGgmlHashes[] = {
      {Encoding::Q4_0, 0x2fd16cb2a9845902ull}, {Encoding::Q4_1, 0x4ee59f08dd6eddfcull},
      {Encoding::Q5_0, 0xb95253a54f1f3d0aull}, {Encoding::Q5_1, 0xdd7b5771018e52dbull},
      {Encoding::Q4_K, 0xbaf0fde88b4fec2cull}, {Encoding::Q5_K, 0x01aff91a598014e3ull},
      {Encoding::Q6_K, 0xbf92e819915404e3ull},
  };
  const auto x = test::parity_row(1024);
  const auto importance = test::parity_importance(1024);
  for (const auto& [e, want] : kGgmlHashes)
    EXPECT_EQ(test::fnv1a(encode(e, x, &importance)), want) << encoding_info(e).name;
}

// ggml's quantize_q8_0 and its F16 / BF16 / F32 conversions take no weights.
TEST(WeightedEncoding, EncodingsWithoutAWeightedFitIgnoreTheImportance) {
  const auto x = test::parity_row(1024);
  const auto importance = test::parity_importance(1024);
  for (Encoding e : {Encoding::Q8_0, Encoding::F16, Encoding::BF16, Encoding::F32})
    EXPECT_EQ(encode(e, x, &importance), encode(e, x, nullptr)) << encoding_info(e).name;
}

// Equal weights do not reduce the weighted encoders to the reference ones:
// ggml then still weighs each element by sqrt(sigma2 + x^2) and searches
// more grid scales, so the bytes differ, and the fit is at least as close.
TEST(WeightedEncoding, EqualImportanceGivesOtherBytesAndNoLargerError) {
  const auto x = test::gaussian_row(4096, 7);
  const std::vector<float> equal(x.size(), 1.0f);
  for (Encoding e : kWeighted) {
    EXPECT_NE(encode(e, x, &equal), encode(e, x, nullptr)) << encoding_info(e).name;
    EXPECT_LE(total(squared_errors(e, x, &equal)), total(squared_errors(e, x, nullptr))) << encoding_info(e).name;
  }
}

// Importance is what the fit spends its accuracy on: columns weighted 1000
// times more come out closer than with equal weights, and the others pay.
TEST(WeightedEncoding, ImportantColumnsComeOutCloser) {
  const auto x = test::gaussian_row(4096, 8);
  const std::vector<float> equal(x.size(), 1.0f);
  std::vector<float> skewed(x.size(), 1.0f);
  for (size_t i = 0; i < x.size(); i += 8) skewed[i] = 1000.0f;
  for (Encoding e : kWeighted) {
    const std::vector<double> with_skewed = squared_errors(e, x, &skewed), with_equal = squared_errors(e, x, &equal);
    double important_skewed = 0, important_equal = 0, rest_skewed = 0, rest_equal = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      (skewed[i] > 1 ? important_skewed : rest_skewed) += with_skewed[i];
      (skewed[i] > 1 ? important_equal : rest_equal) += with_equal[i];
    }
    EXPECT_LT(important_skewed, important_equal) << encoding_info(e).name;
    EXPECT_GT(rest_skewed, rest_equal) << encoding_info(e).name;
  }
}

// Every step of ggml's fits compares weighted sums against each other, so
// scaling all weights by a power of two changes no decision.
TEST(WeightedEncoding, ScalingTheImportanceByAPowerOfTwoKeepsTheBytes) {
  const auto x = test::parity_row(1024);
  const auto importance = test::parity_importance(1024);
  std::vector<float> scaled = importance;
  for (float& w : scaled) w *= 64.0f;
  for (Encoding e : kWeighted) EXPECT_EQ(encode(e, x, &scaled), encode(e, x, &importance)) << encoding_info(e).name;
}

TEST(WeightedEncoding, RowsThatAreNotWholeBlocksAreInvalid) {
  const std::vector<float> x(100, 1.0f);
  std::vector<uint8_t> out(1024);
  EXPECT_THROW(quantize_row_weighted(Encoding::Q4_0, x.data(), out.data(), 100, x.data()), Error);
}

}  // namespace
}  // namespace synapse
