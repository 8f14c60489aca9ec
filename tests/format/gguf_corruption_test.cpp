// Corrupted variants of a valid file: each must give a typed synapse::Error
// (or, for flips that keep the structure valid, parse) and never crash. The
// sanitizer build runs this suite under ASan/UBSan.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "encoding/encoding.h"
#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse {
namespace {

std::vector<uint8_t> valid_file() {
  GgufWriter w;
  auto& m = w.metadata();
  m.set("general.architecture", "llama");
  m.set("llama.block_count", uint32_t{2});
  m.set("llama.rope.freq_base", 10000.f);
  m.set("tokenizer.ggml.tokens", GgufArray::of_strings({"<unk>", "<s>", "</s>", "a", "b"}));
  m.set("tokenizer.ggml.scores", GgufArray::of(std::vector<float>{0, 0, 0, -1, -2}));
  GgufArray nested;
  nested.elem = GgufType::Array;
  nested.arrays = {GgufArray::of(std::vector<int32_t>{1, 2, 3})};
  m.set("x.nested", nested);
  w.add_tensor_bytes("token_embd.weight", {32, 5}, Encoding::F32,
                     std::vector<uint8_t>(32 * 5 * 4, 1));
  w.add_tensor_bytes("blk.0.attn_q.weight", {32, 2}, Encoding::Q8_0,
                     std::vector<uint8_t>(2 * 34, 2));
  w.add_tensor_bytes("output_norm.weight", {32}, Encoding::F32,
                     std::vector<uint8_t>(32 * 4, 3));
  test::TempDir dir;
  w.write(dir.file("v.gguf"));
  std::ifstream in(dir.file("v.gguf"), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Offset of the length prefix of the first occurrence of `s` as a GGUF string.
size_t string_field(const std::vector<uint8_t>& b, const std::string& s) {
  auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
  EXPECT_NE(it, b.end()) << s;
  return static_cast<size_t>(it - b.begin()) - 8;
}

void put_u64(std::vector<uint8_t>& b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }
void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }

enum class Expect { Error, ErrorOrValid };

// Parses `bytes`; any failure must be a synapse::Error.
void check(const std::vector<uint8_t>& bytes, Expect expect, const std::string& what) {
  try {
    GgufFile f = GgufFile::parse(bytes);
    for (const auto& t : f.tensors()) (void)f.tensor_data(t);
    EXPECT_EQ(expect, Expect::ErrorOrValid) << what << ": corrupt file parsed without error";
  } catch (const Error&) {
    // typed: good
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": untyped exception " << e.what();
  }
}

TEST(GgufCorruption, TruncationAtEveryByteIsATypedError) {
  const auto good = valid_file();
  ASSERT_NO_THROW(GgufFile::parse(good));
  GgufFile f = GgufFile::parse(good);
  // Every prefix up to the end of the last tensor's data is invalid.
  uint64_t data_end = 0;
  for (const auto& t : f.tensors())
    data_end = std::max<uint64_t>(data_end, f.data_offset() + t.offset + t.n_bytes);
  int n = 0;
  for (size_t len = 0; len < data_end; ++len, ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
    try {
      GgufFile::parse(cut);
      ADD_FAILURE() << "truncation to " << len << " bytes parsed";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::Truncated || e.kind() == ErrorKind::InvalidString ||
                  e.kind() == ErrorKind::Overflow || e.kind() == ErrorKind::OutOfBounds ||
                  e.kind() == ErrorKind::BadMagic)
          << len << ": " << e.what();
    }
  }
  EXPECT_GT(n, 300);
}

TEST(GgufCorruption, HugeCountsAndDimensionsAreTypedErrorsWithoutHugeAllocations) {
  const auto good = valid_file();
  std::vector<std::pair<std::string, std::vector<uint8_t>>> variants;
  auto variant = [&](const std::string& what, auto&& edit) {
    auto b = good;
    edit(b);
    variants.emplace_back(what, std::move(b));
  };
  for (uint64_t huge : {uint64_t{1} << 62, UINT64_MAX, uint64_t{1} << 32, uint64_t{1000000}}) {
    variant("n_tensors", [&](auto& b) { put_u64(b, 8, huge); });
    variant("n_kv", [&](auto& b) { put_u64(b, 16, huge); });
    variant("key length", [&](auto& b) { put_u64(b, string_field(b, "llama.block_count"), huge); });
    size_t tokens = string_field(good, "tokenizer.ggml.tokens");
    size_t tokens_count = tokens + 8 + 21 + 4 + 4;  // key, value type, element type
    variant("array count", [&](auto& b) { put_u64(b, tokens_count, huge); });
    variant("array string length", [&](auto& b) { put_u64(b, tokens_count + 8, huge); });
    size_t dims = string_field(good, "blk.0.attn_q.weight") + 8 + 19 + 4;
    variant("dim", [&](auto& b) { put_u64(b, dims, huge); });
    variant("second dim", [&](auto& b) { put_u64(b, dims + 8, huge); });
    variant("tensor offset", [&](auto& b) { put_u64(b, dims + 16 + 4, huge); });
  }
  size_t dims = string_field(good, "blk.0.attn_q.weight") + 8 + 19;
  variant("n_dims 9", [&](auto& b) { put_u32(b, dims, 9); });
  variant("n_dims 0", [&](auto& b) { put_u32(b, dims, 0); });
  variant("unknown encoding", [&](auto& b) { put_u32(b, dims + 4 + 16, 1234); });
  variant("misaligned offset", [&](auto& b) { put_u64(b, dims + 4 + 16 + 4, 7); });
  variant("row not a block multiple", [&](auto& b) { put_u64(b, dims + 4, 33); });
  variant("zero dim", [&](auto& b) { put_u64(b, dims + 4, 0); });
  variant("bad magic", [&](auto& b) { b[0] = 'X'; });
  variant("version 1", [&](auto& b) { put_u32(b, 4, 1); });
  variant("big-endian version", [&](auto& b) { put_u32(b, 4, 0x03000000); });
  variant("value type 99", [&](auto& b) {
    put_u32(b, string_field(b, "llama.block_count") + 8 + 17, 99);
  });
  variant("duplicate key", [&](auto& b) {
    size_t at = string_field(b, "llama.rope.freq_base") + 8;
    std::memcpy(&b[at], "llama.block_count\0\0\0", 20);
    put_u64(b, at - 8, 17);  // same length bytes follow: key now repeats, garbage after
  });
  variant("duplicate tensor", [&](auto& b) {
    size_t at = string_field(b, "output_norm.weight") + 8;
    std::memcpy(&b[at], "token_embd.weight", 17);
    put_u64(b, at - 8, 17);
  });
  for (const auto& [what, bytes] : variants) check(bytes, Expect::Error, what);
}

TEST(GgufCorruption, ThousandRandomBitFlipsNeverCrash) {
  const auto good = valid_file();
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 1000; ++i) {
    auto b = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    check(b, Expect::ErrorOrValid, "bit flip variant " + std::to_string(i));
  }
}

}  // namespace
}  // namespace synapse
