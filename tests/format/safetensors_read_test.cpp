// safetensors headers read as the reference implementation
// (huggingface/safetensors) reads them: valid files, and every hostile
// header it refuses refused here with a typed synapse::Error. The sanitizer
// build runs this suite under ASan/UBSan.
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

}  // namespace
}  // namespace synapse
