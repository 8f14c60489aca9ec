// safetensors files written and read back, byte for byte the reference
// implementation's (huggingface/safetensors); the sharded layout's index.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "format/safetensors.h"
#include "format/safetensors_test_files.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse {
namespace {

using namespace test;  // safetensors_test_files.h

// --- the writer, read back -------------------------------------------------

TEST(SafetensorsWrite, RoundTripsTensorsScalarsEmptyTensorsAndMetadata) {
  const std::vector<float> f32 = {0.5f, -1.f, 2.f, 3.25f, 4.f, 5.f};
  const std::vector<uint8_t> f16 = {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x42, 0xff, 0x7b};
  const std::vector<uint8_t> bf16 = {0x80, 0x3f, 0x00, 0x40, 0x40, 0x40, 0x80, 0xc0};
  std::vector<uint8_t> i64(3 * 8);
  for (size_t i = 0; i < i64.size(); ++i) i64[i] = static_cast<uint8_t>(i * 7 + 1);
  const std::vector<float> scalar = {42.f};
  const std::vector<SafetensorsEntry> entries = {
      {"w.f32", "F32", {2, 3}, as_bytes(f32)},
      {"w.f16", "F16", {4}, f16},
      {"empty", "F32", {0, 4}, {}},
      {"w.bf16", "BF16", {2, 2}, bf16},
      {"ids", "I64", {3}, i64},
      {"scale", "F32", {}, as_bytes(scalar)},
  };
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "caf\xc3\xa9 \"quoted\""}};
  test::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  write_safetensors(path, entries, metadata);
  EXPECT_FALSE(std::filesystem::exists(path + ".part"));

  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.metadata(), metadata);
  ASSERT_EQ(f.tensors().size(), entries.size());
  const uint64_t data_start = f.tensors()[0].offset;
  EXPECT_EQ(data_start % 8, 0u) << "header padded to a multiple of 8";
  uint64_t at = data_start;
  for (size_t i = 0; i < entries.size(); ++i) {
    const SafetensorsTensor& t = f.tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, entries[i].name);
    EXPECT_EQ(t.dtype, entries[i].dtype);
    EXPECT_EQ(t.shape, entries[i].shape);
    EXPECT_EQ(t.offset, at);
    EXPECT_EQ(t.n_bytes, entries[i].bytes.size());
    const auto got = f.bytes(t);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), entries[i].bytes.begin(), entries[i].bytes.end()));
    at += t.n_bytes;
  }
  EXPECT_EQ(at, f.mapping()->bytes().size());
  EXPECT_EQ(f.tensors()[0].encoding, Encoding::F32);
  EXPECT_EQ(f.tensors()[1].encoding, Encoding::F16);
  EXPECT_EQ(f.tensors()[3].encoding, Encoding::BF16);
  EXPECT_EQ(f.tensors()[4].encoding, Encoding::I64);
  EXPECT_TRUE(f.tensors()[5].shape.empty());
}

TEST(SafetensorsWrite, WritesTheReferenceImplementationsBytes) {
  // huggingface/safetensors tensor.rs test_serialization and test_empty.
  const std::vector<float> data = {0, 1, 2, 3, 4, 5};
  const std::vector<SafetensorsEntry> one = {{"attn.0", "F32", {1, 2, 3}, as_bytes(data)}};
  test::TempDir dir;
  write_safetensors(dir.file("a"), one);
  const std::string header = R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  std::vector<uint8_t> expected = file_of(header);
  const auto raw = as_bytes(data);
  expected.insert(expected.end(), raw.begin(), raw.end());
  EXPECT_EQ(read_file(dir.file("a")), expected);

  write_safetensors(dir.file("b"), {});
  EXPECT_EQ(read_file(dir.file("b")), file_of("{}      "));
  write_safetensors(dir.file("c"), {}, {{"framework", "pt"}});
  EXPECT_EQ(read_file(dir.file("c")), file_of(R"({"__metadata__":{"framework":"pt"}}     )"));
}

TEST(SafetensorsWrite, RefusesEntriesAReaderWouldRefuse) {
  const std::vector<uint8_t> six(6);
  test::TempDir dir;
  const auto kind = [&](std::vector<SafetensorsEntry> e) {
    try {
      write_safetensors(dir.file("x"), e);
    } catch (const Error& err) {
      return err.kind();
    }
    return ErrorKind::Cancelled;  // stands for "no error"
  };
  EXPECT_EQ(kind({{"a", "F32", {2}, six}}), ErrorKind::InvalidValue);      // bytes disagree with shape
  EXPECT_EQ(kind({{"a", "F128", {3}, six}}), ErrorKind::InvalidValue);     // unknown dtype
  EXPECT_EQ(kind({{"a", "F4", {3}, {six.data(), 1}}}), ErrorKind::InvalidValue);  // 12 bits
  EXPECT_EQ(kind({{"a", "U8", {6}, six}, {"a", "U8", {6}, six}}), ErrorKind::DuplicateTensor);
  EXPECT_EQ(kind({{"__metadata__", "U8", {6}, six}}), ErrorKind::InvalidValue);
  EXPECT_EQ(kind({{"a", "U8", {UINT64_MAX, 2}, six}}), ErrorKind::Overflow);
  EXPECT_EQ(kind({{"bad\xff", "U8", {6}, six}}), ErrorKind::InvalidValue);  // not UTF-8
  EXPECT_FALSE(std::filesystem::exists(dir.file("x")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.part")));
}

TEST(SafetensorsWrite, UnwritablePathIsAnIoError) {
  test::TempDir dir;
  try {
    write_safetensors(dir.file("no/such/dir/x.safetensors"), {});
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
  }
}

// --- the sharded layout's index ----------------------------------------------

::testing::AssertionResult index_refused_as(std::string_view json, ErrorKind kind) {
  try {
    parse_safetensors_index(json);
  } catch (const Error& e) {
    if (e.kind() != kind) return ::testing::AssertionFailure() << "expected " << to_string(kind) << ", got " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "untyped exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}

TEST(SafetensorsIndex, ReadsTheWeightMap) {
  const auto m = parse_safetensors_index(R"({"metadata":{"total_size":1234},"weight_map":{
      "lm_head.weight":"model-00002-of-00002.safetensors",
      "model.embed_tokens.weight":"model-00001-of-00002.safetensors"}})");
  EXPECT_EQ(m, (std::map<std::string, std::string>{{"lm_head.weight", "model-00002-of-00002.safetensors"},
                                                   {"model.embed_tokens.weight", "model-00001-of-00002.safetensors"}}));
}

TEST(SafetensorsIndex, RefusesAnIndexWithoutAWeightMap) {
  EXPECT_TRUE(index_refused_as(R"({"metadata":{}})", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as(R"({"weight_map":["a"]})", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as(R"([])", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as(R"({"weight_map":)", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as("", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as(std::string_view("{\"weight_map\":{}}\0x", 19), ErrorKind::InvalidValue));
}

TEST(SafetensorsIndex, RefusesAShardThatIsNotAString) {
  EXPECT_TRUE(index_refused_as(R"({"weight_map":{"a":1}})", ErrorKind::InvalidValue));
  EXPECT_TRUE(index_refused_as(R"({"weight_map":{"a":null}})", ErrorKind::InvalidValue));
}

TEST(SafetensorsIndex, RefusesAShardOutsideTheIndexFolder) {
  for (const char* shard : {"../x", "a/b", "/etc/passwd", "a\\\\b", "..", ".", "", "a\\u0000b"}) {
    EXPECT_TRUE(index_refused_as(std::string(R"({"weight_map":{"t":")") + shard + "\"}}", ErrorKind::InvalidValue))
        << shard;
  }
  EXPECT_NO_THROW(parse_safetensors_index(R"({"weight_map":{"t":"..x.safetensors"}})"));
}

TEST(SafetensorsIndex, RefusesATensorMappedTwiceAndDeepNesting) {
  EXPECT_TRUE(index_refused_as(R"({"weight_map":{"t":"a.safetensors","t":"b.safetensors"}})",
                               ErrorKind::DuplicateTensor));
  EXPECT_TRUE(index_refused_as("{\"metadata\":" + std::string(100000, '['), ErrorKind::InvalidValue));
}

}  // namespace
}  // namespace synapse
