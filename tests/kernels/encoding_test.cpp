// Tensor encodings: the layout table, fp16/bf16 conversions, hand-built
// blocks decoded by ggml's documented formulas, and quantize/dequantize
// round trips with per-type error bounds.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/encoding/encoding.h"
#include "kernels/encoding/fp16.h"
#include "synapse/error.h"

namespace synapse {
namespace {

template <typename F>
ErrorKind error_kind_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "expected synapse::Error";
  return ErrorKind::Io;
}

// ---------------------------------------------------------------- table

struct Layout {
  Encoding id;
  const char* name;
  uint32_t elems;
  uint32_t bytes;
};

// From ggml-common.h block structs and ggml.c type traits.
const Layout kGgmlLayouts[] = {
    {Encoding::F32, "f32", 1, 4},          {Encoding::F16, "f16", 1, 2},
    {Encoding::Q4_0, "q4_0", 32, 18},      {Encoding::Q4_1, "q4_1", 32, 20},
    {Encoding::Q5_0, "q5_0", 32, 22},      {Encoding::Q5_1, "q5_1", 32, 24},
    {Encoding::Q8_0, "q8_0", 32, 34},      {Encoding::Q8_1, "q8_1", 32, 36},
    {Encoding::Q2_K, "q2_K", 256, 84},     {Encoding::Q3_K, "q3_K", 256, 110},
    {Encoding::Q4_K, "q4_K", 256, 144},    {Encoding::Q5_K, "q5_K", 256, 176},
    {Encoding::Q6_K, "q6_K", 256, 210},    {Encoding::Q8_K, "q8_K", 256, 292},
    {Encoding::IQ2_XXS, "iq2_xxs", 256, 66}, {Encoding::IQ2_XS, "iq2_xs", 256, 74},
    {Encoding::IQ3_XXS, "iq3_xxs", 256, 98}, {Encoding::IQ1_S, "iq1_s", 256, 50},
    {Encoding::IQ4_NL, "iq4_nl", 32, 18},  {Encoding::IQ3_S, "iq3_s", 256, 110},
    {Encoding::IQ2_S, "iq2_s", 256, 82},   {Encoding::IQ4_XS, "iq4_xs", 256, 136},
    {Encoding::I8, "i8", 1, 1},            {Encoding::I16, "i16", 1, 2},
    {Encoding::I32, "i32", 1, 4},          {Encoding::I64, "i64", 1, 8},
    {Encoding::F64, "f64", 1, 8},          {Encoding::IQ1_M, "iq1_m", 256, 56},
    {Encoding::BF16, "bf16", 1, 2},        {Encoding::TQ1_0, "tq1_0", 256, 54},
    {Encoding::TQ2_0, "tq2_0", 256, 66},   {Encoding::MXFP4, "mxfp4", 32, 17},
};

const Encoding kCodecs[] = {Encoding::F32,  Encoding::F16,  Encoding::BF16, Encoding::Q8_0,
                            Encoding::Q4_0, Encoding::Q4_1, Encoding::Q5_0, Encoding::Q5_1,
                            Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};

bool in_codecs(Encoding e) {
  for (Encoding c : kCodecs)
    if (c == e) return true;
  return false;
}

TEST(EncodingTable, EveryGgmlTypeHasGgmlNameAndBlockLayout) {
  for (const Layout& l : kGgmlLayouts) {
    SCOPED_TRACE(l.name);
    const auto info = find_encoding(static_cast<uint32_t>(l.id));
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->id, l.id);
    EXPECT_STREQ(info->name, l.name);
    EXPECT_EQ(info->block_elems, l.elems);
    EXPECT_EQ(info->block_bytes, l.bytes);
    EXPECT_EQ(info->has_codec, in_codecs(l.id));
  }
}

TEST(EncodingTable, RemovedAndOutOfRangeIdsAreUnknown) {
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u, UINT32_MAX}) {
    EXPECT_FALSE(find_encoding(id).has_value()) << id;
  }
}

TEST(EncodingTable, EncodingInfoOfUnknownIdThrowsNamingTheId) {
  std::string message;
  EXPECT_EQ(error_kind_of([] { encoding_info(77); }, &message), ErrorKind::UnknownEncoding);
  EXPECT_NE(message.find("id 77"), std::string::npos) << message;
  EXPECT_EQ(encoding_info(12).block_bytes, 144u);
}

TEST(EncodingTable, NamesParseCaseInsensitively) {
  EXPECT_EQ(encoding_from_name("q4_K"), Encoding::Q4_K);
  EXPECT_EQ(encoding_from_name("Q4_K"), Encoding::Q4_K);
  EXPECT_EQ(encoding_from_name("q6_k"), Encoding::Q6_K);
  EXPECT_EQ(encoding_from_name("BF16"), Encoding::BF16);
  EXPECT_EQ(encoding_from_name("MXFP4"), Encoding::MXFP4);
  for (const Layout& l : kGgmlLayouts) EXPECT_EQ(encoding_from_name(l.name), l.id) << l.name;
  for (const char* bad : {"", "q4", "q4_k_m", "f32 ", "float"}) {
    EXPECT_FALSE(encoding_from_name(bad).has_value()) << bad;
  }
}

TEST(EncodingRowBytes, RowBytesCountsWholeBlocks) {
  EXPECT_EQ(row_bytes(Encoding::Q4_K, 4096), 16u * 144);
  EXPECT_EQ(row_bytes(Encoding::Q8_0, 64), 68u);
  EXPECT_EQ(row_bytes(Encoding::BF16, 3), 6u);
  EXPECT_EQ(row_bytes(Encoding::IQ2_XXS, 512), 132u);  // layout known without a codec
  EXPECT_EQ(row_bytes(Encoding::F32, 0), 0u);
}

TEST(EncodingRowBytes, PartialBlockIsInvalidValue) {
  EXPECT_EQ(error_kind_of([] { row_bytes(Encoding::Q4_0, 33); }), ErrorKind::InvalidValue);
  EXPECT_EQ(error_kind_of([] { row_bytes(Encoding::Q6_K, 128); }), ErrorKind::InvalidValue);
}

TEST(EncodingRowBytes, ByteCountBeyond64BitsIsOverflow) {
  EXPECT_EQ(error_kind_of([] { row_bytes(Encoding::F32, uint64_t{1} << 62); }), ErrorKind::Overflow);
  EXPECT_EQ(error_kind_of([] { row_bytes(Encoding::Q8_0, UINT64_MAX - 31); }), ErrorKind::Overflow);
  EXPECT_EQ(row_bytes(Encoding::F32, (uint64_t{1} << 62) - 1), UINT64_MAX - 3);
}

TEST(EncodingRowBytes, UnknownEncodingValueThrowsUnknownEncoding) {
  EXPECT_EQ(error_kind_of([] { row_bytes(static_cast<Encoding>(77), 32); }), ErrorKind::UnknownEncoding);
}

// ---------------------------------------------------------------- codec errors

TEST(EncodingCodecErrors, PartialOrNegativeRowIsInvalidValue) {
  std::vector<float> f(64);
  std::vector<uint8_t> q(64);
  EXPECT_EQ(error_kind_of([&] { quantize_row(Encoding::Q4_0, f.data(), q.data(), 33); }),
            ErrorKind::InvalidValue);
  EXPECT_EQ(error_kind_of([&] { dequantize_row(Encoding::Q8_0, q.data(), f.data(), 31); }),
            ErrorKind::InvalidValue);
  EXPECT_EQ(error_kind_of([&] { dequantize_row(Encoding::F32, q.data(), f.data(), -1); }),
            ErrorKind::InvalidValue);
}

TEST(EncodingCodecErrors, KnownEncodingWithoutCodecNamesNameAndId) {
  std::vector<float> f(256);
  std::vector<uint8_t> q(1024);
  std::string message;
  EXPECT_EQ(error_kind_of([&] { dequantize_row(Encoding::IQ2_XXS, q.data(), f.data(), 256); }, &message),
            ErrorKind::UnknownEncoding);
  EXPECT_NE(message.find("iq2_xxs"), std::string::npos) << message;
  EXPECT_NE(message.find("16"), std::string::npos) << message;
  EXPECT_EQ(error_kind_of([&] { quantize_row(Encoding::MXFP4, f.data(), q.data(), 32); }, &message),
            ErrorKind::UnknownEncoding);
  EXPECT_NE(message.find("mxfp4"), std::string::npos) << message;
}

TEST(EncodingCodecErrors, UnknownEncodingValueThrowsNamingTheId) {
  std::vector<float> f(32);
  std::vector<uint8_t> q(64);
  std::string message;
  EXPECT_EQ(error_kind_of([&] { quantize_row(static_cast<Encoding>(99), f.data(), q.data(), 32); }, &message),
            ErrorKind::UnknownEncoding);
  EXPECT_NE(message.find("99"), std::string::npos) << message;
}

// ---------------------------------------------------------------- fp16 / bf16

float bits_to_float(uint32_t b) { return std::bit_cast<float>(b); }

TEST(EncodingFp16, EveryHalfDecodesExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const float got = fp16_to_fp32(static_cast<uint16_t>(h));
    if (exponent == 0x1f) {
      if (mantissa == 0) EXPECT_EQ(got, static_cast<float>(sign * INFINITY)) << h;
      else EXPECT_TRUE(std::isnan(got)) << h;
      continue;
    }
    const double want = exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                      : sign * std::ldexp(1024.0 + mantissa, static_cast<int>(exponent) - 25);
    ASSERT_EQ(got, static_cast<float>(want)) << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
  }
}

TEST(EncodingFp16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaN payloads are canonicalised
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h))), h) << h;
  }
}

TEST(EncodingFp16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);          // tie, 1.0 is even
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);      // tie, 0x3c02 is even
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // just above the tie
  EXPECT_EQ(fp32_to_fp16(-2.0f - 0x1p-10f), 0xc000);         // tie below -2, even is -2
  EXPECT_EQ(fp32_to_fp16(0.1f), 0x2e66);
}

TEST(EncodingFp16, SubnormalsRoundAndFlushCorrectly) {
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);                 // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);                 // tie with zero, even is zero
  EXPECT_EQ(fp32_to_fp16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * 0x1p-25f), 0x0002);             // tie between 1 and 2 units
  EXPECT_EQ(fp32_to_fp16(0x1p-14f - 0x1p-25f), 0x0400);      // tie rounds up into the normals
  EXPECT_EQ(fp32_to_fp16(-0x1p-24f), 0x8001);
  EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_fp32(0x03ff), 1023 * 0x1p-24f);
}

TEST(EncodingFp16, OverflowGivesInfinityAndNanStaysNan) {
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65519.996f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);  // tie, 0x7bff is odd
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(INFINITY), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(fp32_to_fp16(bits_to_float(0xff800001)), 0xfe00);  // signalling, negative
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7e00)));
}

#if defined(__FLT16_MANT_DIG__)
TEST(EncodingFp16, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Exponents around the fp16 range, where rounding is interesting.
    const uint32_t bits = (rng() & 0x807fffffu) | ((96u + rng() % 48u) << 23);
    const float f = bits_to_float(bits);
    const _Float16 h = static_cast<_Float16>(f);
    ASSERT_EQ(fp32_to_fp16(f), std::bit_cast<uint16_t>(h)) << std::hex << bits;
  }
}
#endif

TEST(EncodingBf16, DecodesByShiftingIntoTheHighHalf) {
  EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_fp32(0xc040), -3.0f);
  EXPECT_EQ(bf16_to_fp32(0x0001), bits_to_float(0x00010000));  // subnormal kept
  EXPECT_EQ(bf16_to_fp32(0x7f80), INFINITY);
}

TEST(EncodingBf16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(1.0f + 0x1p-8f), 0x3f80);       // tie, even is 1.0
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);   // tie, even is 0x3f82
  EXPECT_EQ(fp32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x00008000)), 0x0000);  // subnormal tie
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x00018000)), 0x0002);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x80010000)), 0x8001);
}

TEST(EncodingBf16, OverflowGivesInfinityAndNanIsQuieted) {
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(-INFINITY), 0xff80);
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0x7f800001)), 0x7fc0);  // payload in low bits only
  EXPECT_EQ(fp32_to_bf16(bits_to_float(0xffa00000)), 0xffe0);  // sign and top payload kept
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

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

std::vector<float> gaussian_row(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

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
    const uint32_t block = encoding_info(static_cast<uint32_t>(b.e)).block_elems;
    for (int64_t n : {int64_t{96}, int64_t{256}, int64_t{768}, int64_t{4096}}) {
      // 96 is three legacy blocks but not a whole K-quant super-block.
      if (n % block != 0) continue;
      const auto x = gaussian_row(n, static_cast<uint32_t>(n) + static_cast<uint32_t>(b.e));
      const double err = relative_rms_error(x, round_trip(b.e, x));
      EXPECT_LE(err, b.max_relative_rms) << encoding_info(static_cast<uint32_t>(b.e)).name << " n=" << n;
    }
  }
}

TEST(EncodingRoundTrip, AllZeroRowsDecodeToExactZeros) {
  for (Encoding e : kCodecs) {
    const std::vector<float> x(512, 0.0f);
    for (float v : round_trip(e, x)) ASSERT_EQ(v, 0.0f) << encoding_info(static_cast<uint32_t>(e)).name;
  }
}

TEST(EncodingRoundTrip, OneHugeValueIsKeptAndNothingBecomesNonFinite) {
  for (Encoding e : kCodecs) {
    SCOPED_TRACE(encoding_info(static_cast<uint32_t>(e)).name);
    auto x = gaussian_row(512, 3);
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
    auto x = gaussian_row(512, 11);
    for (float& v : x) v = -1.0f - std::fabs(v);
    const double err = relative_rms_error(x, round_trip(b.e, x));
    EXPECT_LE(err, b.max_relative_rms) << encoding_info(static_cast<uint32_t>(b.e)).name;
  }
}

TEST(EncodingRoundTrip, ConstantRowsDecodeCloseToTheConstant) {
  for (Encoding e : kCodecs) {
    for (float c : {0.7f, -3.25f}) {
      const std::vector<float> x(256, c);
      for (float v : round_trip(e, x)) ASSERT_NEAR(v, c, 0.01f * std::fabs(c)) << encoding_info(static_cast<uint32_t>(e)).name;
    }
  }
}

TEST(EncodingRoundTrip, DequantizingTwiceGivesIdenticalFloats) {
  for (Encoding e : kCodecs) {
    const auto x = gaussian_row(512, 5);
    EXPECT_EQ(round_trip(e, x), round_trip(e, x)) << encoding_info(static_cast<uint32_t>(e)).name;
  }
}

// ---------------------------------------------------------------- ggml parity

// Library-independent input: xorshift32 noise whose scale changes per
// 32-element block, two outliers, an all-zero block and a negative block.
std::vector<float> parity_row(int64_t n) {
  uint32_t s = 0x12345678u;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    const float u = static_cast<float>(s >> 8) * 0x1p-23f - 1.0f;
    x[i] = u * 0.05f * static_cast<float>(1 + (i / 32) % 7);
  }
  x[5] = 3.0f;
  x[700] = -4.5f;
  for (int64_t i = 256; i < 288; ++i) x[i] = 0.0f;
  for (int64_t i = 512; i < 544; ++i) x[i] = -0.25f - 0.001f * static_cast<float>(i % 5);
  return x;
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

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
  const auto x = parity_row(1024);
  for (const auto& [e, want] : kGgmlHashes) {
    std::vector<uint8_t> q(row_bytes(e, 1024));
    quantize_row(e, x.data(), q.data(), 1024);
    EXPECT_EQ(fnv1a(q), want) << encoding_info(static_cast<uint32_t>(e)).name;
  }
}

}  // namespace
}  // namespace synapse
