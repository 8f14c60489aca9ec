#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "encoding/encoding.h"
#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synapse/error.h"

namespace synapse {
namespace {

// A writer holding one value of every metadata type, nested arrays included.
GgufWriter every_type_writer() {
  GgufWriter w;
  auto& m = w.metadata();
  m.set("general.architecture", "llama");
  m.set("t.u8", uint8_t{200});
  m.set("t.i8", int8_t{-100});
  m.set("t.u16", uint16_t{60000});
  m.set("t.i16", int16_t{-30000});
  m.set("t.u32", uint32_t{4000000000u});
  m.set("t.i32", int32_t{-2000000000});
  m.set("t.f32", 1.5f);
  m.set("t.bool", true);
  m.set("t.string", std::string("héllo"));
  m.set("t.u64", uint64_t{1} << 60);
  m.set("t.i64", int64_t{-(int64_t{1} << 60)});
  m.set("t.f64", 2.25);
  m.set("t.floats", GgufArray::of(std::vector<float>{1.f, 2.f, 3.f}));
  m.set("t.strings", GgufArray::of_strings({"a", "", "ccc"}));
  GgufArray nested;
  nested.elem = GgufType::Array;
  nested.arrays = {GgufArray::of(std::vector<int32_t>{1, 2}), GgufArray::of(std::vector<int32_t>{3})};
  m.set("t.nested", nested);
  std::vector<float> row(64);
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i) * 0.25f;
  std::vector<uint8_t> bytes(row.size() * 4);
  std::memcpy(bytes.data(), row.data(), bytes.size());
  w.add_tensor_bytes("a.weight", {32, 2}, Encoding::F32, bytes);
  w.add_tensor_bytes("b.weight", {7}, Encoding::F32,
                     std::vector<uint8_t>(28, 0x3f));
  return w;
}

TEST(GgufRoundTrip, ReadsBackEveryMetadataTypeAndTensor) {
  test::TempDir dir;
  every_type_writer().write(dir.file("a.gguf"));
  GgufFile f = GgufFile::open(dir.file("a.gguf"));
  EXPECT_EQ(f.version(), 3u);
  const auto& m = f.metadata();
  EXPECT_EQ(m.size(), 16u);
  EXPECT_EQ(m.get_int("t.u8"), 200);
  EXPECT_EQ(m.get_int("t.i8"), -100);
  EXPECT_EQ(m.get_int("t.u16"), 60000);
  EXPECT_EQ(m.get_int("t.i16"), -30000);
  EXPECT_EQ(m.get_int("t.u32"), 4000000000LL);
  EXPECT_EQ(m.get_int("t.i32"), -2000000000);
  EXPECT_EQ(m.get_double("t.f32"), 1.5);
  EXPECT_TRUE(m.get_bool("t.bool"));
  EXPECT_EQ(m.get_string("t.string"), "héllo");
  EXPECT_EQ(m.get_int("t.u64"), int64_t{1} << 60);
  EXPECT_EQ(m.get_int("t.i64"), -(int64_t{1} << 60));
  EXPECT_EQ(m.get_double("t.f64"), 2.25);
  EXPECT_EQ(m.get_array("t.floats").double_at(2), 3.0);
  EXPECT_EQ(m.get_array("t.strings").string_at(2), "ccc");
  EXPECT_EQ(m.get_array("t.nested").arrays[1].int_at(0), 3);
  ASSERT_EQ(f.tensors().size(), 2u);
  const auto* a = f.find_tensor("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dims, (std::vector<uint64_t>{32, 2}));
  EXPECT_EQ(a->n_bytes, 256u);
  EXPECT_EQ((f.data_offset() + a->offset) % f.alignment(), 0u);
  float v;
  std::memcpy(&v, f.tensor_data(*a).data() + 4 * 5, 4);
  EXPECT_EQ(v, 1.25f);
}

TEST(GgufRoundTrip, RewritingAReadFileIsByteExact) {
  test::TempDir dir;
  GgufWriter w = every_type_writer();
  w.metadata().set("general.alignment", uint32_t{64});
  w.write(dir.file("a.gguf"));
  GgufFile f = GgufFile::open(dir.file("a.gguf"));
  EXPECT_EQ(f.alignment(), 64u);
  GgufWriter copy;
  for (const auto& [k, v] : f.metadata().entries()) copy.metadata().set(k, v);
  for (const auto& t : f.tensors()) {
    auto span = f.tensor_data(t);
    copy.add_tensor_bytes(t.name, t.dims, t.encoding, {span.begin(), span.end()});
  }
  copy.write(dir.file("b.gguf"));
  EXPECT_EQ(test::read_bytes(dir.file("a.gguf")), test::read_bytes(dir.file("b.gguf")));
}

TEST(GgufRoundTrip, TypedGettersNameTheKeyOnWrongTypeOrAbsence) {
  GgufMetadata m;
  m.set("x", std::string("text"));
  try {
    m.get_int("x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidType);
    EXPECT_EQ(e.subject(), "x");
  }
  try {
    m.get_string("missing.key");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
    EXPECT_EQ(e.subject(), "missing.key");
  }
}

TEST(GgufWriterTest, FailedWriteLeavesNoPartialFile) {
  test::TempDir dir;
  GgufWriter w;
  w.metadata().set("general.architecture", "llama");
  w.add_tensor("t", {4}, Encoding::F32,
               [](uint8_t*, uint64_t) { throw Error(ErrorKind::InvalidValue, "producer failed"); });
  EXPECT_THROW(w.write(dir.file("x.gguf")), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.gguf")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.gguf.part")));
}

TEST(GgufWriterTest, RejectsDuplicateTensorNames) {
  GgufWriter w;
  w.add_tensor_bytes("t", {1}, Encoding::F32, std::vector<uint8_t>(4));
  try {
    w.add_tensor_bytes("t", {1}, Encoding::F32, std::vector<uint8_t>(4));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DuplicateTensor);
  }
}

}  // namespace
}  // namespace synapse
