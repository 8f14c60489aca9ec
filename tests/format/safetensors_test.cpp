// safetensors: the writer's files read back; every hostile header the
// reference implementation (huggingface/safetensors) refuses is refused here
// with a typed synapse::Error; the sharded layout's index. The sanitizer
// build runs this suite under ASan/UBSan.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "format/safetensors.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse {
namespace {

std::vector<uint8_t> le64(uint64_t v) {
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

// A file whose length field says `length`, then `header`, then `data_bytes`
// bytes of data.
std::vector<uint8_t> file_with(uint64_t length, std::string_view header, size_t data_bytes = 0) {
  std::vector<uint8_t> b = le64(length);
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i));
  return b;
}
std::vector<uint8_t> file_of(std::string_view header, size_t data_bytes = 0) {
  return file_with(header.size(), header, data_bytes);
}

// One tensor's JSON entry.
std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  std::string s = "\"";
  s.append(name).append("\":{\"dtype\":\"").append(dtype).append("\",\"shape\":").append(shape);
  return s.append(",\"data_offsets\":").append(offsets).append("}");
}

// A JSON object of entries (built with append: GCC 12 misreads
// `"{" + std::string` as an overlapping copy, -Wrestrict).
std::string object(const std::vector<std::string>& entries) {
  std::string s = "{";
  for (size_t i = 0; i < entries.size(); ++i) s.append(i ? "," : "").append(entries[i]);
  return s.append("}");
}

::testing::AssertionResult refused_as(std::span<const uint8_t> bytes, ErrorKind kind,
                                      const std::string& subject = {}) {
  try {
    parse_safetensors(bytes);
  } catch (const Error& e) {
    if (e.kind() != kind) return ::testing::AssertionFailure() << "expected " << to_string(kind) << ", got " << e.what();
    if (!subject.empty() && e.subject() != subject)
      return ::testing::AssertionFailure() << "expected subject " << subject << ", got " << e.what();
    return ::testing::AssertionSuccess() << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "untyped exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::span<const uint8_t> as_bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)};
}

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

// --- valid files -------------------------------------------------------------

TEST(SafetensorsRead, ReadsTheReferenceImplementationsTestVectors) {
  const auto h = parse_safetensors(file_of(R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})", 16));
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(h.tensors[0].encoding, Encoding::I32);
  EXPECT_EQ(h.tensors[0].offset, h.data_start);
  EXPECT_EQ(h.data_start, 8u + 60u);
  // An empty shape is a scalar; a zero dimension is an empty tensor.
  EXPECT_NO_THROW(parse_safetensors(file_of(R"({"test":{"dtype":"I32","shape":[],"data_offsets":[0,4]}})", 4)));
  EXPECT_NO_THROW(parse_safetensors(file_of(R"({"test":{"dtype":"I32","shape":[2,0],"data_offsets":[0, 0]}})")));
  // JSON whitespace may pad the header on either side.
  EXPECT_NO_THROW(parse_safetensors(file_of("{}\r \t\n")));
  EXPECT_NO_THROW(parse_safetensors(file_of("\t\n{}\r ")));
}

TEST(SafetensorsRead, ReturnsTensorsInOffsetOrderWithAbsoluteOffsets) {
  const std::string h = object({tensor("b", "U8", "[3]", "[5,8]"), tensor("z", "F32", "[0]", "[5,5]"),
                                 tensor("a", "I16", "[2]", "[1,5]"), tensor("c", "BOOL", "[1]", "[0,1]")});
  const auto header = parse_safetensors(file_of(h, 8));
  std::vector<std::string> names;
  for (const auto& t : header.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c", "a", "z", "b"}));
  EXPECT_EQ(header.tensors[1].offset, header.data_start + 1);
  EXPECT_EQ(header.tensors[1].n_bytes, 4u);
  EXPECT_FALSE(header.tensors[0].encoding.has_value());  // BOOL: no ggml encoding
}

TEST(SafetensorsRead, KnowsEveryReferenceDtypeAndItsSize) {
  const std::vector<std::pair<std::string, int>> bits = {
      {"BOOL", 8},  {"F4", 4},       {"F6_E2M3", 6},     {"F6_E3M2", 6},     {"U8", 8},   {"I8", 8},
      {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},   {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
      {"I16", 16},  {"U16", 16},     {"F16", 16},        {"BF16", 16},       {"I32", 32}, {"U32", 32},
      {"F32", 32},  {"C64", 64},     {"F64", 64},        {"I64", 64},        {"U64", 64}};
  for (const auto& [dtype, b] : bits) {
    SCOPED_TRACE(dtype);
    const int n = 8 * b / 8;  // 8 elements
    EXPECT_NO_THROW(parse_safetensors(file_of(object({tensor("t", dtype, "[8]", "[0," + std::to_string(n) + "]")}), n)));
  }
  // Sub-byte dtypes must fill whole bytes (the reference's MisalignedSlice).
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "F4", "[3]", "[0,2]")}), 2), ErrorKind::InvalidValue, "t"));
}

TEST(SafetensorsRead, IgnoresUnknownTensorFieldsAsTheReferenceDoes) {
  // serde's derived TensorInfo has no deny_unknown_fields: extra fields pass.
  const auto h = parse_safetensors(
      file_of(R"({"t":{"dtype":"U8","extra":{"x":[1,{"y":null}]},"shape":[2],"data_offsets":[0,2],"z":-1.5}})", 2));
  EXPECT_EQ(h.tensors.size(), 1u);
}

TEST(SafetensorsRead, AcceptsNullMetadataAsTheReferenceDoes) {
  const auto h = parse_safetensors(file_of(R"({"__metadata__":null})"));
  EXPECT_TRUE(h.metadata.empty());
}

TEST(SafetensorsRead, OpensTheSharedStoriesModel) {
  for (const char* file : {"model.safetensors", "model.bf16.safetensors"}) {
    const auto path = test::shared_data(std::string("hf-models/stories260K-hf/") + file);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared test data " << path << " is absent";
    const SafetensorsFile f = SafetensorsFile::open(path);
    ASSERT_FALSE(f.tensors().empty());
    EXPECT_EQ(f.metadata().at("format"), "pt");
    const auto& t = f.tensors().front();
    EXPECT_EQ(t.name, "model.embed_tokens.weight");
    EXPECT_EQ(t.shape, (std::vector<uint64_t>{512, 64}));
    const auto& last = f.tensors().back();
    EXPECT_EQ(last.offset + last.n_bytes, f.mapping()->bytes().size());
    for (const auto& x : f.tensors()) EXPECT_TRUE(x.encoding == Encoding::F32 || x.encoding == Encoding::BF16) << x.name;
  }
}

// --- hostile files -----------------------------------------------------------

TEST(SafetensorsRead, RefusesAFileShorterThanItsLengthField) {
  EXPECT_TRUE(refused_as(std::vector<uint8_t>{}, ErrorKind::Truncated));
  EXPECT_TRUE(refused_as(std::vector<uint8_t>{2, 0, 0, 0, 0}, ErrorKind::Truncated));
}

TEST(SafetensorsRead, RefusesAHeaderRunningPastTheFile) {
  EXPECT_TRUE(refused_as(file_with(100, "{}"), ErrorKind::Truncated));
  EXPECT_TRUE(refused_as(file_with(60, ""), ErrorKind::Truncated));  // the reference's test_invalid_header_length
}

TEST(SafetensorsRead, RefusesAHeaderOverTheReferenceLimit) {
  EXPECT_TRUE(refused_as(file_with(kSafetensorsMaxHeaderBytes + 1, "{}"), ErrorKind::Overflow));
  EXPECT_TRUE(refused_as(file_with(UINT64_MAX, "{}"), ErrorKind::Overflow));
  EXPECT_TRUE(refused_as(file_with(0xffffff000000003c, "{}"), ErrorKind::Overflow));  // test_header_too_large
}

TEST(SafetensorsRead, RefusesAHeaderThatIsNotJson) {
  EXPECT_TRUE(refused_as(file_of("{"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(""), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("{'a': 1}"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("{} x"), ErrorKind::InvalidValue));
  // NUL padding: nlohmann's lexer would end the input at the NUL.
  EXPECT_TRUE(refused_as(file_of(std::string("{}\0\0", 4)), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(std::string("{}\0{\"x\":1}", 10)), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("\xff"), ErrorKind::InvalidValue));                    // not UTF-8
  EXPECT_TRUE(refused_as(file_of("{\"\xc3\":1}"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("\xef\xbb\xbf{}"), ErrorKind::InvalidValue));  // nlohmann would skip the BOM
  EXPECT_TRUE(refused_as(file_of("{/* c */}"), ErrorKind::InvalidValue));
  try {
    parse_safetensors(file_of("{\"a\" 1}"));
  } catch (const Error& e) {
    EXPECT_EQ(e.offset(), 8u + 5u) << e.what();  // at the '1'
  }
}

TEST(SafetensorsRead, RefusesAHeaderThatIsNotAnObject) {
  EXPECT_TRUE(refused_as(file_of("[1,2]"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("42"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("null"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of("\"x\""), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, RefusesATensorEntryThatIsNotAnObject) {
  // serde would read the array as TensorInfo's fields in order; we do not.
  EXPECT_TRUE(refused_as(file_of(R"({"t":["U8",[1],[0,1]]})", 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"t":"U8"})"), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"t":null})"), ErrorKind::InvalidValue, "t"));
}

TEST(SafetensorsRead, RefusesATensorMissingDtypeShapeOrOffsets) {
  EXPECT_TRUE(refused_as(file_of(R"({"t":{"shape":[1],"data_offsets":[0,1]}})", 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"t":{"dtype":"U8","data_offsets":[0,1]}})", 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"t":{"dtype":"U8","shape":[1]}})", 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"t":{}})"), ErrorKind::InvalidValue, "t"));
}

TEST(SafetensorsRead, RefusesFieldsOfTheWrongType) {
  for (const char* t : {
           R"("t":{"dtype":5,"shape":[1],"data_offsets":[0,1]})",
           R"("t":{"dtype":["U8"],"shape":[1],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":"1","data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":{"0":1},"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[true],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]})",
           R"("t":{"dtype":"U8","shape":[1],"data_offsets":{"begin":0,"end":1}})",
           R"("t":{"dtype":"U8","shape":[1],"data_offsets":[0,"1"]})",
           R"("t":{"dtype":"U8","shape":[1],"data_offsets":[0]})",
           R"("t":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]})",
           R"("t":{"dtype":"U8","shape":[1],"data_offsets":null})",
       }) {
    EXPECT_TRUE(refused_as(file_of(object({t}), 1), ErrorKind::InvalidValue, "t")) << t;
  }
}

TEST(SafetensorsRead, RefusesNegativeNumbers) {
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[-1]", "[0,1]")}), 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[1]", "[-1,0]")}), 1), ErrorKind::InvalidValue, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[1]", "[0,-1]")}), 1), ErrorKind::InvalidValue, "t"));
  // "-0" is the integer 0 to serde_json too.
  EXPECT_NO_THROW(parse_safetensors(file_of(object({tensor("t", "U8", "[1]", "[-0,1]")}), 1)));
}

TEST(SafetensorsRead, RefusesAnUnknownDtype) {
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "F128", "[1]", "[0,16]")}), 16), ErrorKind::UnknownEncoding, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "f32", "[1]", "[0,4]")}), 4), ErrorKind::UnknownEncoding, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "", "[1]", "[0,4]")}), 4), ErrorKind::UnknownEncoding, "t"));
}

TEST(SafetensorsRead, RefusesOffsetsThatEndBeforeTheyBegin) {
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[0]", "[4,0]")}), 4), ErrorKind::InvalidValue, "t"));
}

TEST(SafetensorsRead, RefusesAGapBetweenTensors) {
  const std::string h = object({tensor("a", "F32", "[1]", "[0,4]"), tensor("b", "F32", "[1]", "[8,12]")});
  EXPECT_TRUE(refused_as(file_of(h, 12), ErrorKind::InvalidValue, "b"));
  // Nor may the first tensor start past the buffer's start.
  EXPECT_TRUE(refused_as(file_of(object({tensor("a", "F32", "[1]", "[4,8]")}), 8), ErrorKind::InvalidValue, "a"));
  try {
    parse_safetensors(file_of(h, 12));
  } catch (const Error& e) {
    EXPECT_EQ(e.offset(), 8 + h.size() + 8) << e.what();  // b's begin, absolute
  }
}

TEST(SafetensorsRead, RefusesOverlappingTensors) {
  const std::string h = object({tensor("a", "F32", "[2]", "[0,8]"), tensor("b", "F32", "[2]", "[4,12]")});
  EXPECT_TRUE(refused_as(file_of(h, 12), ErrorKind::InvalidValue, "b"));
  // The reference's test_json_attack: ten tensors all at [0,16].
  std::vector<std::string> all;
  for (int i = 0; i < 10; ++i) all.push_back(tensor("weight_" + std::to_string(i), "F32", "[2,2]", "[0,16]"));
  EXPECT_TRUE(refused_as(file_of(object(all), 16), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, RefusesATensorEndingPastTheBuffer) {
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "F32", "[4]", "[0,16]")}), 8), ErrorKind::OutOfBounds, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[1]", "[0,18446744073709551615]")}), 8),
                         ErrorKind::OutOfBounds, "t"));
}

TEST(SafetensorsRead, RefusesTrailingBytesPastTheLastTensor) {
  // The reference's test_metadata_incomplete_buffer (a polyglot file).
  const std::string h = R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})";
  auto f = file_of(h, 16);
  f.insert(f.end(), {'e', 'x', 't', 'r', 'a'});
  EXPECT_TRUE(refused_as(f, ErrorKind::InvalidValue, "test"));
  EXPECT_TRUE(refused_as(file_of("{}", 1), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, RefusesAShapeThatDisagreesWithTheBytes) {
  // The reference's test_invalid_info.
  EXPECT_TRUE(refused_as(file_of(R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0, 4]}})", 4),
                         ErrorKind::InvalidValue, "test"));
}

TEST(SafetensorsRead, RefusesAShapeWhoseSizeOverflows) {
  // The reference's test_validation_overflow: the element count, then the bytes.
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "I32", "[2,18446744073709551614]", "[0,16]")}), 16),
                         ErrorKind::Overflow, "t"));
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "I32", "[2,9223372036854775807]", "[0,16]")}), 16),
                         ErrorKind::Overflow, "t"));
  // A zero after the overflow does not save it (checked_mul left to right).
  EXPECT_TRUE(refused_as(file_of(object({tensor("t", "U8", "[4294967296,4294967296,0]", "[0,0]")})),
                         ErrorKind::Overflow, "t"));
  EXPECT_NO_THROW(parse_safetensors(file_of(object({tensor("t", "U8", "[0,4294967296,4294967296]", "[0,0]")}))));
}

TEST(SafetensorsRead, RefusesADuplicateTensorName) {
  // serde's HashMap would keep the last silently.
  const std::string h = object({tensor("a", "U8", "[1]", "[0,1]"), tensor("a", "U8", "[1]", "[1,2]")});
  EXPECT_TRUE(refused_as(file_of(h, 2), ErrorKind::DuplicateTensor, "a"));
}

TEST(SafetensorsRead, RefusesDuplicateFieldsAndMetadataKeys) {
  EXPECT_TRUE(refused_as(file_of(R"({"t":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
                         ErrorKind::DuplicateKey, "t"));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{},"__metadata__":{}})"), ErrorKind::DuplicateKey));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k":"a","k":"b"}})"), ErrorKind::DuplicateKey, "k"));
}

TEST(SafetensorsRead, RefusesDeepNestingWithoutRecursing) {
  const std::string head = R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":)";
  const auto nested = [&](size_t depth) {
    return file_of(head + std::string(depth, '[') + std::string(depth, ']') + "}}", 1);
  };
  // serde_json (the reference's parser) takes 127 levels and refuses the 128th.
  EXPECT_NO_THROW(parse_safetensors(nested(125)));
  EXPECT_TRUE(refused_as(nested(126), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(head + std::string(1000000, '[')), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, RefusesMetadataThatIsNotStringToString) {
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k":1}})"), ErrorKind::InvalidValue, "k"));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k":null}})"), ErrorKind::InvalidValue, "k"));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k":{"a":"b"}}})"), ErrorKind::InvalidValue, "k"));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":["k","v"]})"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":"k"})"), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, RefusesNulBytesInNamesAndMetadata) {
  // The reference's InvalidTensorName / InvalidMetadata guards.
  EXPECT_TRUE(refused_as(file_of(object({tensor("a\\u0000b", "U8", "[1]", "[0,1]")}), 1), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k\u0000":"v"}})"), ErrorKind::InvalidValue));
  EXPECT_TRUE(refused_as(file_of(R"({"__metadata__":{"k":"v\u0000"}})"), ErrorKind::InvalidValue));
}

TEST(SafetensorsRead, EveryTruncationAndHeaderByteFlipIsATypedErrorOrParses) {
  const std::string h = object({R"("__metadata__":{"format":"pt"})", tensor("a", "F32", "[2]", "[0,8]"),
                                 tensor("b", "BF16", "[1]", "[8,10]")});
  const auto good = file_of(h, 10);
  ASSERT_NO_THROW(parse_safetensors(good));
  for (size_t len = 0; len < good.size(); ++len)
    EXPECT_TRUE(refused_as(std::span(good).first(len), len < 8 + h.size() ? ErrorKind::Truncated
                                                                          : ErrorKind::OutOfBounds))
        << len;
  for (size_t i = 0; i < 8 + h.size(); ++i) {
    for (uint8_t x : {0x01, 0x20, 0x80}) {
      auto bad = good;
      bad[i] ^= x;
      try {
        parse_safetensors(bad);
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << ": untyped exception " << e.what();
      }
    }
  }
}

TEST(SafetensorsFile, NamesThePathInItsErrors) {
  test::TempDir dir;
  try {
    SafetensorsFile::open(dir.file("missing.safetensors"));
    FAIL() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  const std::string path = dir.file("bad.safetensors");
  {
    const auto bytes = file_with(100, "{}");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    SafetensorsFile::open(path);
    FAIL() << "opened a truncated file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Truncated);
    EXPECT_EQ(e.subject(), path);
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
