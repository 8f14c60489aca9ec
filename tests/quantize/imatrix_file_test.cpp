// Importance matrix files: the GGUF layout llama.cpp's imatrix tool writes,
// its legacy .dat layout, llama-quantize's normalisation and metadata, and
// typed errors (never a crash) for hostile files.
#include "quantize/imatrix_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>

#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "support/error_kind.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synapse/error.h"

namespace synapse::quant {
namespace {

Imatrix sample() {
  Imatrix m;
  m.datasets = {"wiki.train.raw", "code.txt"};
  m.chunk_count = 7;
  m.chunk_size = 512;
  m.entries["blk.0.attn_q.weight"] = {{1, 2, 3, 4, 5, 6, 7, 8}, {4}};
  m.entries["blk.0.ffn_up_exps.weight"] = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 0, 6}};
  return m;
}

TEST(ImatrixFile, GgufRoundTripKeepsEntriesAndMetadata) {
  test::TempDir dir;
  const Imatrix m = sample();
  write_imatrix(m, dir.file("i.gguf"));
  const Imatrix back = read_imatrix(dir.file("i.gguf"));
  EXPECT_EQ(back.datasets, m.datasets);
  EXPECT_EQ(back.chunk_count, 7u);
  EXPECT_EQ(back.chunk_size, 512u);
  ASSERT_EQ(back.entries.size(), 2u);
  for (const auto& [name, e] : m.entries) {
    EXPECT_EQ(back.entries.at(name).in_sum2, e.in_sum2) << name;
    EXPECT_EQ(back.entries.at(name).counts, e.counts) << name;
  }
}

// save_imatrix: general.type first, then the three imatrix keys; per entry
// in name order its sums [row, n_matrices] and counts [1, n_matrices], with
// ggml's trailing dimensions of 1 dropped.
TEST(ImatrixFile, GgufLayoutIsLlamaCppImatrixTools) {
  test::TempDir dir;
  write_imatrix(sample(), dir.file("i.gguf"));
  const GgufFile f = GgufFile::open(dir.file("i.gguf"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : f.metadata().entries()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"general.type", "imatrix.datasets", "imatrix.chunk_count",
                                            "imatrix.chunk_size"}));
  EXPECT_EQ(f.metadata().get_string("general.type"), "imatrix");
  std::vector<std::pair<std::string, std::vector<uint64_t>>> tensors;
  for (const GgufTensorInfo& t : f.tensors()) tensors.emplace_back(t.name, t.dims);
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> want = {
      {"blk.0.attn_q.weight.in_sum2", {8}},
      {"blk.0.attn_q.weight.counts", {1}},
      {"blk.0.ffn_up_exps.weight.in_sum2", {4, 3}},
      {"blk.0.ffn_up_exps.weight.counts", {1, 3}},
  };
  EXPECT_EQ(tensors, want);
}

// llama-quantize's load_imatrix: sums over the count rounded to an integer
// (lround: 2.5 -> 3), 1 for a matrix whose count rounds to 0 or below.
TEST(ImatrixFile, ImportanceDividesByTheRoundedCountPerMatrix) {
  const ImatrixEntry e{{6, 12, 2, 4, 8, 16, 10, 20}, {2.5f, 0.4f, -3.0f, 4.0f}};
  EXPECT_EQ(importance(e), (std::vector<float>{6 / 3.0f, 12 / 3.0f, 1, 1, 1, 1, 10 / 4.0f, 20 / 4.0f}));
  EXPECT_EQ(test::error_kind([] { importance(ImatrixEntry{{1, 2, 3}, {1, 1}}); }), ErrorKind::InvalidValue);
}

void put_i32(std::vector<uint8_t>& b, int32_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof v);
}

void put_entry(std::vector<uint8_t>& b, const std::string& name, int32_t calls, const std::vector<float>& values) {
  put_i32(b, static_cast<int32_t>(name.size()));
  b.insert(b.end(), name.begin(), name.end());
  put_i32(b, calls);
  put_i32(b, static_cast<int32_t>(values.size()));
  const auto* p = reinterpret_cast<const uint8_t*>(values.data());
  b.insert(b.end(), p, p + values.size() * sizeof(float));
}

// Two entries (one never called), chunk count 10, dataset "wiki.txt".
std::vector<uint8_t> legacy_file() {
  std::vector<uint8_t> b;
  put_i32(b, 2);
  put_entry(b, "blk.0.attn_k.weight", 4, {8, 2, 1});
  put_entry(b, "blk.0.attn_v.weight", 0, {5, 7});
  put_i32(b, 10);
  put_i32(b, 8);
  for (char c : std::string("wiki.txt")) b.push_back(static_cast<uint8_t>(c));
  return b;
}

// The legacy loader divides by the entry's call count, or keeps the sums
// when it is 0.
TEST(ImatrixFile, LegacyFileReadsWithLlamaQuantizesNormalisation) {
  const Imatrix m = parse_imatrix(legacy_file());
  EXPECT_EQ(m.datasets, std::vector<std::string>{"wiki.txt"});
  EXPECT_EQ(m.chunk_count, 10u);
  EXPECT_EQ(m.chunk_size, 0u);
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(importance(m.entries.at("blk.0.attn_k.weight")), (std::vector<float>{2, 0.5f, 0.25f}));
  EXPECT_EQ(importance(m.entries.at("blk.0.attn_v.weight")), (std::vector<float>{5, 7}));
}

TEST(ImatrixFile, LegacyFileWithoutTrailerHasNoDataset) {
  std::vector<uint8_t> b;
  put_i32(b, 1);
  put_entry(b, "w", 3, {3});
  const Imatrix m = parse_imatrix(b);
  EXPECT_TRUE(m.datasets.empty());
  EXPECT_EQ(m.chunk_count, 0u);
}

// llama-quantize's kv_overrides: the path and first dataset cut to 127
// bytes, the entry count, and the chunk count only when positive as an int.
TEST(ImatrixFile, MetadataIsLlamaQuantizesKvOverrides) {
  Imatrix m = sample();
  m.datasets[0] = std::string(200, 'd');
  const std::string file(150, 'f');
  auto keys = imatrix_metadata(m, file);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].first, "quantize.imatrix.file");
  EXPECT_EQ(keys[0].second.as_string(), std::string(127, 'f'));
  EXPECT_EQ(keys[1].first, "quantize.imatrix.dataset");
  EXPECT_EQ(keys[1].second.as_string(), std::string(127, 'd'));
  EXPECT_EQ(keys[2].first, "quantize.imatrix.entries_count");
  EXPECT_EQ(keys[2].second.type(), GgufType::Uint32);
  EXPECT_EQ(keys[2].second.as_int(), 2);
  EXPECT_EQ(keys[3].first, "quantize.imatrix.chunks_count");
  EXPECT_EQ(keys[3].second.as_int(), 7);
  m.datasets.clear();
  m.chunk_count = 0x80000000u;  // negative as llama-quantize's int
  keys = imatrix_metadata(m, "i.gguf");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[1].first, "quantize.imatrix.entries_count");
}

// A GGUF imatrix with one thing wrong, written by the generic writer.
struct Hostile {
  const char* what;
  ErrorKind kind;
  std::function<void(GgufWriter&)> edit;  // after the valid keys, before any tensor
};

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(ImatrixFile, HostileGgufFilesGiveTypedErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto pair = [](GgufWriter& w, std::vector<float> sums, std::vector<float> counts) {
    w.add_tensor_bytes("w.in_sum2", {sums.size()}, Encoding::F32, f32_bytes(sums));
    w.add_tensor_bytes("w.counts", {counts.size()}, Encoding::F32, f32_bytes(counts));
  };
  const Hostile cases[] = {
      {"sums without counts", ErrorKind::InvalidValue,
       [](GgufWriter& w) { w.add_tensor_bytes("w.in_sum2", {4}, Encoding::F32, f32_bytes({1, 2, 3, 4})); }},
      {"counts without sums", ErrorKind::InvalidValue,
       [](GgufWriter& w) { w.add_tensor_bytes("w.counts", {1}, Encoding::F32, f32_bytes({1})); }},
      {"f16 sums", ErrorKind::InvalidType,
       [](GgufWriter& w) {
         w.add_tensor_bytes("w.in_sum2", {2}, Encoding::F16, std::vector<uint8_t>(4, 0));
         w.add_tensor_bytes("w.counts", {1}, Encoding::F32, f32_bytes({1}));
       }},
      {"sums that do not split per count", ErrorKind::InvalidValue, [&](GgufWriter& w) { pair(w, {1, 2, 3}, {1, 1}); }},
      {"NaN sum", ErrorKind::InvalidValue, [&](GgufWriter& w) { pair(w, {1, nan}, {1}); }},
      {"infinite count", ErrorKind::InvalidValue, [&](GgufWriter& w) { pair(w, {1, 2}, {inf}); }},
      {"negative sum of squares", ErrorKind::InvalidValue, [&](GgufWriter& w) { pair(w, {1, -2}, {1}); }},
      {"in_sum of another size", ErrorKind::InvalidValue,
       [&](GgufWriter& w) {
         pair(w, {1, 2}, {1});
         w.add_tensor_bytes("w.in_sum", {3}, Encoding::F32, f32_bytes({1, 2, 3}));
       }},
      {"no tensors", ErrorKind::InvalidValue, [](GgufWriter&) {}},
      {"chunk count as int32", ErrorKind::InvalidType,
       [&](GgufWriter& w) {
         w.metadata().set("imatrix.chunk_count", GgufValue(int32_t{3}));
         pair(w, {1}, {1});
       }},
      {"datasets not strings", ErrorKind::InvalidType,
       [&](GgufWriter& w) {
         w.metadata().set("imatrix.datasets", GgufArray::of(std::vector<int32_t>{1}));
         pair(w, {1}, {1});
       }},
      {"no chunk size", ErrorKind::MissingKey,
       [&](GgufWriter& w) {
         w.metadata().erase("imatrix.chunk_size");
         pair(w, {1}, {1});
       }},
  };
  for (const Hostile& c : cases) {
    GgufWriter w;
    w.metadata().set("general.type", "imatrix");
    w.metadata().set("imatrix.datasets", GgufArray::of_strings({"d"}));
    w.metadata().set("imatrix.chunk_count", GgufValue(uint32_t{1}));
    w.metadata().set("imatrix.chunk_size", GgufValue(uint32_t{1}));
    c.edit(w);
    test::TempDir dir;
    w.write(dir.file("h.gguf"));
    EXPECT_EQ(test::error_kind([&] { read_imatrix(dir.file("h.gguf")); }), c.kind) << c.what;
  }
}

TEST(ImatrixFile, HostileLegacyFilesGiveTypedErrors) {
  std::vector<uint8_t> no_entries;
  put_i32(no_entries, 0);
  std::vector<uint8_t> negative_name;
  put_i32(negative_name, 1);
  put_i32(negative_name, -5);
  std::vector<uint8_t> no_values;
  put_i32(no_values, 1);
  put_entry(no_values, "w", 1, {});
  std::vector<uint8_t> nan_value;
  put_i32(nan_value, 1);
  put_entry(nan_value, "w", 1, {std::numeric_limits<float>::quiet_NaN()});
  std::vector<uint8_t> cut_dataset = legacy_file();
  cut_dataset.pop_back();
  EXPECT_EQ(test::error_kind([&] { parse_imatrix(no_entries); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { parse_imatrix(negative_name); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { parse_imatrix(no_values); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { parse_imatrix(nan_value); }), ErrorKind::InvalidValue);
  EXPECT_EQ(test::error_kind([&] { parse_imatrix(cut_dataset); }), ErrorKind::Truncated);
  EXPECT_EQ(test::error_kind([&] { parse_imatrix({}); }), ErrorKind::Truncated);
}

TEST(ImatrixFile, ErrorsNameTheFile) {
  try {
    read_imatrix("/nonexistent/imatrix.gguf");
    FAIL() << "read a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("imatrix /nonexistent/imatrix.gguf"), std::string::npos) << e.what();
  }
}

// Every failure on a damaged file must be a synapse::Error.
void expect_typed_or_valid(const std::vector<uint8_t>& bytes, const std::string& what) {
  try {
    parse_imatrix(bytes);
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": untyped exception " << e.what();
  }
}

TEST(ImatrixFileCorruption, TruncationsAndBitFlipsNeverCrash) {
  test::TempDir dir;
  write_imatrix(sample(), dir.file("i.gguf"));
  for (const std::vector<uint8_t>& good : {test::read_bytes(dir.file("i.gguf")), legacy_file()}) {
    for (size_t len = 0; len < good.size(); ++len) {
      const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
      expect_typed_or_valid(cut, "cut to " + std::to_string(len));
    }
    std::mt19937_64 rng(99);
    for (int i = 0; i < 2000; ++i) {
      std::vector<uint8_t> b = good;
      for (int k = 0, flips = 1 + static_cast<int>(rng() % 4); k < flips; ++k)
        b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      expect_typed_or_valid(b, "bit flip variant " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace synapse::quant
