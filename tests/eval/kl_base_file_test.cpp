// The --kl-divergence-base file: written whole or not at all, and read
// back only when every size in it adds up.
#include "eval/kl_base_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "encoding/fp16.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse::eval {
namespace {

// A reference of 2 chunks of 4 tokens (1 scored row each) over 3 tokens.
std::string write_reference(const test::TempDir& dir) {
  const std::vector<int32_t> tokens = {0, 1, 2, 1, 2, 2, 0, 1};
  const std::string path = dir.file("ref.kld");
  KlBaseWriter writer(path, {4, 3, 2}, tokens);
  writer.write_row(std::vector<float>{-0.5f, -1.5f, -2.5f});
  writer.write_row(std::vector<float>{-3.0f, -0.25f, -4.0f});
  writer.commit();
  return path;
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

ErrorKind read_error(const std::string& path) {
  try {
    KlBaseReader reader(path);
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << path << " was read without error";
  return ErrorKind::Io;
}

TEST(KlBaseFile, RowsAndTokensReadBackAsWritten) {
  test::TempDir dir;
  const KlBaseReader reader(write_reference(dir));
  EXPECT_EQ(reader.header().n_ctx, 4u);
  EXPECT_EQ(reader.header().n_vocab, 3u);
  EXPECT_EQ(reader.header().n_chunks, 2u);
  EXPECT_EQ(reader.tokens(), (std::vector<int32_t>{0, 1, 2, 1, 2, 2, 0, 1}));
  EXPECT_EQ(reader.layout().scored(), 1);
  EXPECT_EQ(fp16_to_fp32(reader.row(0, 0)[1]), -1.5f);
  EXPECT_EQ(fp16_to_fp32(reader.row(1, 0)[1]), -0.25f);
}

TEST(KlBaseFile, AnUncommittedWriterLeavesNoFile) {
  test::TempDir dir;
  {
    KlBaseWriter writer(dir.file("ref.kld"), {4, 3, 2}, std::vector<int32_t>(8, 0));
    writer.write_row(std::vector<float>{-1, -1, -1});
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("")));
}

TEST(KlBaseFile, CommittingTooFewRowsFailsAndLeavesNoFile) {
  test::TempDir dir;
  KlBaseWriter writer(dir.file("ref.kld"), {4, 3, 2}, std::vector<int32_t>(8, 0));
  writer.write_row(std::vector<float>{-1, -1, -1});
  EXPECT_THROW(writer.commit(), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ref.kld")));
}

TEST(KlBaseFile, DamagedFilesGiveTypedErrors) {
  test::TempDir dir;
  const std::vector<char> good = bytes_of(write_reference(dir));
  const std::string path = dir.file("bad.kld");

  write_bytes(path, {});
  EXPECT_EQ(read_error(path), ErrorKind::BadMagic);

  // Each damage on a copy of its own (reassigning one vector after a
  // push_back trips GCC 12's -Wstringop-overflow at -O1).
  std::vector<char> bad_magic = good;
  bad_magic[0] = 'X';
  write_bytes(path, bad_magic);
  EXPECT_EQ(read_error(path), ErrorKind::BadMagic);

  write_bytes(path, std::vector<char>(good.begin(), good.begin() + 12));
  EXPECT_EQ(read_error(path), ErrorKind::Truncated);

  write_bytes(path, std::vector<char>(good.begin(), good.end() - 1));
  EXPECT_EQ(read_error(path), ErrorKind::Truncated);

  std::vector<char> trailing = good;
  trailing.push_back(0);
  write_bytes(path, trailing);
  EXPECT_EQ(read_error(path), ErrorKind::InvalidValue);

  // A huge declared vocabulary, whose rows the file cannot hold.
  std::vector<char> huge_vocabulary = good;
  const uint32_t huge = 0xffffffffu;
  std::memcpy(huge_vocabulary.data() + 12, &huge, 4);
  write_bytes(path, huge_vocabulary);
  EXPECT_EQ(read_error(path), ErrorKind::InvalidValue);

  // A token outside the vocabulary.
  std::vector<char> outside = good;
  const int32_t token = 3;
  std::memcpy(outside.data() + 20, &token, 4);
  write_bytes(path, outside);
  EXPECT_EQ(read_error(path), ErrorKind::InvalidValue);

  EXPECT_EQ(read_error(dir.file("missing.kld")), ErrorKind::Io);
}

}  // namespace
}  // namespace synapse::eval
