// Tensor encodings: hand-built blocks decoded by ggml's documented formulas,
// quantize/dequantize round trips with per-type error bounds, and byte
// parity of the quantizers with ggml's reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "encoding/encoding.h"
#include "encoding/fp16.h"
#include "support/gaussian_row.h"
#include "synapse/error.h"

#include "encoding/codec_list.h"
#include "encoding/parity_row.h"
#include "support/byte_hash.h"

namespace synapse {
namespace {

// ---------------------------------------------------------------- hand-built blocks
// Each test writes bytes by hand and checks values computed from ggml's
// documented decoding formula. fp16 constants: 0x3c00 = 1, 0x3800 = 0.5,
// 0x3400 = 0.25, 0x3000 = 0.125, 0x4000 = 2, 0xbc00 = -1.

void put_half(std::vector<uint8_t>& b, size_t at, uint16_t h) {
  b[at] = static_cast<uint8_t>(h);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}

std::vector<float> decode(Encoding e, const std::vector<uint8_t>& bytes, int64_t n) {
  EXPECT_EQ(bytes.size(), row_bytes(e, n));
  std::vector<float> out(n);
  dequantize_row(e, bytes.data(), out.data(), n);
  return out;
}

TEST(EncodingKnownBlocks, Q4_0IsNibbleMinus8TimesD) {
  std::vector<uint8_t> b(18, 0x88);  // every level 8 decodes to 0
  put_half(b, 0, 0x3800);            // d = 0.5
  b[2 + 0] = 0x1f;                   // element 0: 15, element 16: 1
  const auto x = decode(Encoding::Q4_0, b, 32);
  EXPECT_EQ(x[0], (15 - 8) * 0.5f);
  EXPECT_EQ(x[16], (1 - 8) * 0.5f);
  EXPECT_EQ(x[1], 0.0f);
}

TEST(EncodingKnownBlocks, Q4_1IsNibbleTimesDPlusM) {
  std::vector<uint8_t> b(20, 0);
  put_half(b, 0, 0x3400);  // d = 0.25
  put_half(b, 2, 0xbc00);  // m = -1
  b[4 + 3] = 0xa2;         // element 3: 2, element 19: 10
  const auto x = decode(Encoding::Q4_1, b, 32);
  EXPECT_EQ(x[3], 2 * 0.25f - 1);
  EXPECT_EQ(x[19], 10 * 0.25f - 1);
  EXPECT_EQ(x[0], -1.0f);
}

TEST(EncodingKnownBlocks, Q5_0TakesFifthBitFromQhBitJ) {
  std::vector<uint8_t> b(22, 0);
  put_half(b, 0, 0x3c00);  // d = 1
  b[2] = 0x04;             // qh bit 2 -> element 2
  b[5] = 0x80;             // qh bit 31 -> element 31
  b[6 + 2] = 0x31;         // element 2 low nibble 1, element 18 high nibble 3
  b[6 + 15] = 0xf0;        // element 31 low bits 15
  const auto x = decode(Encoding::Q5_0, b, 32);
  EXPECT_EQ(x[2], (17 - 16) * 1.0f);
  EXPECT_EQ(x[18], (3 - 16) * 1.0f);
  EXPECT_EQ(x[31], (31 - 16) * 1.0f);
  EXPECT_EQ(x[0], -16.0f);
}

TEST(EncodingKnownBlocks, Q5_1IsFiveBitLevelTimesDPlusM) {
  std::vector<uint8_t> b(24, 0);
  put_half(b, 0, 0x3800);  // d = 0.5
  put_half(b, 2, 0x4000);  // m = 2
  b[4 + 2] = 0x01;         // qh bit 16 -> element 16
  b[8 + 0] = 0x0f;         // element 0: 15, element 16 low bits 0
  const auto x = decode(Encoding::Q5_1, b, 32);
  EXPECT_EQ(x[0], 15 * 0.5f + 2);
  EXPECT_EQ(x[16], 16 * 0.5f + 2);
  EXPECT_EQ(x[1], 2.0f);
}

TEST(EncodingKnownBlocks, Q8_0IsSignedByteTimesD) {
  std::vector<uint8_t> b(34, 0);
  put_half(b, 0, 0x3000);  // d = 0.125
  b[2 + 5] = static_cast<uint8_t>(-100);
  b[2 + 31] = 127;
  const auto x = decode(Encoding::Q8_0, b, 32);
  EXPECT_EQ(x[5], -100 * 0.125f);
  EXPECT_EQ(x[31], 127 * 0.125f);
}

// Q4_K scales bytes: [0..3] scale j (6 bits) | top bits of scale j+4;
// [4..7] min j | top bits of min j+4; [8..11] low nibbles of scale/min j+4.
TEST(EncodingKnownBlocks, Q4_KUnpacksSixBitScalesForSubBlocksAbove4) {
  std::vector<uint8_t> b(144, 0);
  put_half(b, 0, 0x3c00);                    // d = 1
  put_half(b, 2, 0x3800);                    // dmin = 0.5
  uint8_t* scales = b.data() + 4;
  uint8_t* qs = b.data() + 16;
  scales[1] = 3 | (0b10 << 6);               // scale 1 = 3; top bits of scale 5 = 2
  scales[5] = 7 | (0b10 << 6);               // min 1 = 7; top bits of min 5 = 2
  scales[9] = 0x0d | (0x6 << 4);             // scale 5 = 0b10'1101 = 45, min 5 = 0b10'0110 = 38
  qs[0] = 0x40;                              // element 32 (sub-block 1, high nibble): 4
  qs[64 + 7] = 0xb0;                         // element 167 (sub-block 5, high nibble): 11
  const auto x = decode(Encoding::Q4_K, b, 256);
  EXPECT_EQ(x[32], 1.0f * 3 * 4 - 0.5f * 7);
  EXPECT_EQ(x[33], -0.5f * 7);
  EXPECT_EQ(x[167], 1.0f * 45 * 11 - 0.5f * 38);
  EXPECT_EQ(x[160], -0.5f * 38);
  EXPECT_EQ(x[0], 0.0f);
}

TEST(EncodingKnownBlocks, Q5_KAddsSixteenFromQhBitOfTheSubBlock) {
  std::vector<uint8_t> b(176, 0);
  put_half(b, 0, 0x3800);                    // d = 0.5
  put_half(b, 2, 0x4000);                    // dmin = 2
  uint8_t* scales = b.data() + 4;
  uint8_t* qh = b.data() + 16;
  uint8_t* qs = b.data() + 48;
  scales[2] = 0b11 << 6;                     // top bits of scale 6 = 3
  scales[6] = 0b01 << 6;                     // top bits of min 6 = 1
  scales[10] = 0x2 | (0x1 << 4);             // scale 6 = 0b11'0010 = 50, min 6 = 0b01'0001 = 17
  qs[96 + 4] = 0x09;                         // element 196 (sub-block 6, low nibble): 9
  qh[4] = 1 << 6;                            // its fifth bit: sub-block 6 uses qh bit 6
  qs[96 + 5] = 0x09;                         // element 197: 9, no fifth bit
  const auto x = decode(Encoding::Q5_K, b, 256);
  EXPECT_EQ(x[196], 0.5f * 50 * 25 - 2.0f * 17);
  EXPECT_EQ(x[197], 0.5f * 50 * 9 - 2.0f * 17);
  EXPECT_EQ(x[228], 0.0f);                   // same qs byte, high nibble: sub-block 7 is all zero
}

// Q6_K: per 128-element half, ql[l] holds elements l (low) and l+64 (high),
// ql[l+32] holds l+32 and l+96; qh[l] holds their top 2 bits in that order.
TEST(EncodingKnownBlocks, Q6_KIsSignedScaleTimesSixBitLevelMinus32) {
  std::vector<uint8_t> b(210, 0);
  uint8_t* ql = b.data();
  uint8_t* qh = b.data() + 128;
  auto* scales = reinterpret_cast<int8_t*>(b.data() + 192);
  std::memset(qh, 0xaa, 64);                 // top bits 2 everywhere: level 32 decodes to 0
  put_half(b, 208, 0x3400);                  // d = 0.25
  scales[13] = -7;                           // sub-block 13: elements 208..223
  scales[1] = 5;                             // sub-block 1: elements 16..31
  ql[64 + 18] = 0x50;                        // element 128 + 18 + 64 = 210: low bits 5
  ql[17] = 0x0f;                             // element 17: low bits 15
  qh[17] = 0xa8;                             // element 17: top bits 0
  const auto x = decode(Encoding::Q6_K, b, 256);
  EXPECT_EQ(x[210], 0.25f * -7 * (37 - 32));
  EXPECT_EQ(x[17], 0.25f * 5 * (15 - 32));
  EXPECT_EQ(x[146], 0.0f);                   // shares ql[82] (low nibble 0, level 32)
}

// ---------------------------------------------------------------- round trips

// Quantizes and dequantizes x, checking the encoder writes exactly
// row_bytes bytes (a guard region after the row stays untouched).
std::vector<float> round_trip(Encoding e, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const size_t bytes = row_bytes(e, n);
  std::vector<uint8_t> q(bytes + 64, 0xcd);
  quantize_row(e, x.data(), q.data(), n);
  for (size_t i = bytes; i < q.size(); ++i) EXPECT_EQ(q[i], 0xcd) << "wrote past the row at " << i;
  std::vector<float> y(n);
  dequantize_row(e, q.data(), y.data(), n);
  return y;
}

double relative_rms_error(const std::vector<float>& x, const std::vector<float>& y) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    ref += double(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

struct Bound {
  Encoding e;
  double max_relative_rms;  // RMS error over RMS of the data
};

// Measured on these gaussian rows (n = 96 / 256 / 768 / 4096): f16 0.00021,
// bf16 0.0017, q8_0 0.0055, q4_0 0.089, q4_1 0.081, q5_0 0.048, q5_1 0.040,
// q4_K 0.074, q5_K 0.038, q6_K 0.018.
const Bound kBounds[] = {
    {Encoding::F32, 0.0},     {Encoding::F16, 0.0003}, {Encoding::BF16, 0.0025},
    {Encoding::Q8_0, 0.008},  {Encoding::Q4_0, 0.11},  {Encoding::Q4_1, 0.10},
    {Encoding::Q5_0, 0.06},   {Encoding::Q5_1, 0.05},  {Encoding::Q4_K, 0.085},
    {Encoding::Q5_K, 0.045},  {Encoding::Q6_K, 0.025},
};

TEST(EncodingRoundTrip, GaussianRowsStayWithinPerTypeErrorBound) {
  for (const Bound& b : kBounds) {
    const uint32_t block = encoding_info(b.e).block_elems;
    for (int64_t n : {int64_t{96}, int64_t{256}, int64_t{768}, int64_t{4096}}) {
      // 96 is three legacy blocks but not a whole K-quant super-block.
      if (n % block != 0) continue;
      const auto x = test::gaussian_row(n, static_cast<uint32_t>(n) + static_cast<uint32_t>(b.e));
      const double err = relative_rms_error(x, round_trip(b.e, x));
      EXPECT_LE(err, b.max_relative_rms) << encoding_info(b.e).name << " n=" << n;
    }
  }
}

TEST(EncodingRoundTrip, AllZeroRowsDecodeToExactZeros) {
  for (Encoding e : kCodecs) {
    const std::vector<float> x(512, 0.0f);
    for (float v : round_trip(e, x)) ASSERT_EQ(v, 0.0f) << encoding_info(e).name;
  }
}

TEST(EncodingRoundTrip, OneHugeValueIsKeptAndNothingBecomesNonFinite) {
  for (Encoding e : kCodecs) {
    SCOPED_TRACE(encoding_info(e).name);
    auto x = test::gaussian_row(512, 3);
    for (float& v : x) v *= 0.01f;
    x[7] = 1000.0f;
    x[300] = -2000.0f;
    const auto y = round_trip(e, x);
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    EXPECT_NEAR(y[7], 1000.0f, 20.0f);
    EXPECT_NEAR(y[300], -2000.0f, 40.0f);
  }
}

TEST(EncodingRoundTrip, NegativeOnlyRowsStayWithinBound) {
  for (const Bound& b : kBounds) {
    auto x = test::gaussian_row(512, 11);
    for (float& v : x) v = -1.0f - std::fabs(v);
    const double err = relative_rms_error(x, round_trip(b.e, x));
    EXPECT_LE(err, b.max_relative_rms) << encoding_info(b.e).name;
  }
}

TEST(EncodingRoundTrip, ConstantRowsDecodeCloseToTheConstant) {
  for (Encoding e : kCodecs) {
    for (float c : {0.7f, -3.25f}) {
      const std::vector<float> x(256, c);
      for (float v : round_trip(e, x)) ASSERT_NEAR(v, c, 0.01f * std::fabs(c)) << encoding_info(e).name;
    }
  }
}

TEST(EncodingRoundTrip, DequantizingTwiceGivesIdenticalFloats) {
  for (Encoding e : kCodecs) {
    const auto x = test::gaussian_row(512, 5);
    EXPECT_EQ(round_trip(e, x), round_trip(e, x)) << encoding_info(e).name;
  }
}

// ---------------------------------------------------------------- ggml parity

// FNV-1a of the bytes ggml's reference quantizers (ggml_quantize_chunk
// without an importance matrix) write for parity_row(1024), computed with
// the pinned peer's libggml-base (@node-llama-cpp/linux-x64 3.22.1).
TEST(EncodingGgmlParity, QuantizersWriteTheSameBytesAsGgmlReference) {
  const std::pair<Encoding, uint64_t> kGgmlHashes[] = {
      {Encoding::F16, 0x77aa8f01320f3e75ull},  {Encoding::BF16, 0x2b8578290d8e8ca1ull},
      {Encoding::Q8_0, 0x46f43bda854039c3ull}, {Encoding::Q4_0, 0x57919534db459d37ull},
      {Encoding::Q4_1, 0xddc3934d1aa0b567ull}, {Encoding::Q5_0, 0xb031ac5257d8633full},
      {Encoding::Q5_1, 0xfb28f54a8fac1792ull}, {Encoding::Q4_K, 0xa55a3bd28a681b7aull},
      {Encoding::Q5_K, 0x54b1cb0f370c2eeaull}, {Encoding::Q6_K, 0x55c767582b7ded2eull},
  };
  const auto x = test::parity_row(1024);
  for (const auto& [e, want] : kGgmlHashes) {
    std::vector<uint8_t> q(row_bytes(e, 1024));
    quantize_row(e, x.data(), q.data(), 1024);
    EXPECT_EQ(test::fnv1a(q), want) << encoding_info(e).name;
  }
}

}  // namespace
}  // namespace synapse
