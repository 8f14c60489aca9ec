// Tensor encodings: the layout table, row sizes and errors, fp16/bf16
// conversions. Decoding and round trips are in encoding_codec_test.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "encoding/codec_list.h"
#include "encoding/encoding.h"
#include "encoding/fp16.h"
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
  EXPECT_EQ(error_kind_of([] { encoding_info(static_cast<Encoding>(77)); }, &message), ErrorKind::UnknownEncoding);
  EXPECT_NE(message.find("id 77"), std::string::npos) << message;
  EXPECT_EQ(encoding_info(Encoding::Q4_K).block_bytes, 144u);
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

}  // namespace
}  // namespace synapse
