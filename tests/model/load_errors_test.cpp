// Files the loader must refuse, each with its specific error.
#include <gtest/gtest.h>

#include <fstream>

#include "encoding/encoding.h"
#include "model/model.h"
#include "model/model_test_files.h"
#include "support/temp_dir.h"
#include "synapse/error.h"

namespace synapse {
namespace {

using test::shared_data;

// Runs load_model and returns the error it throws (fails if none).
Error load_error(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << path << " loaded";
  return Error(ErrorKind::Io, "no error");
}

Error load_edited_stories(const test::GgufEdit& edit) {
  test::TempDir dir;
  const std::string path = dir.file("edited.gguf");
  test::rewrite_gguf(shared_data(test::kStoriesGguf), path, edit);
  return load_error(path);
}

TEST(ModelErrors, UnsupportedArchitectureIsNamed) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Error e = load_edited_stories({.metadata = [](GgufMetadata& md) { md.set("general.architecture", "mamba"); }});
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_EQ(e.message(), "architecture 'mamba' is not supported (supported: llama, qwen2, qwen3, olmoe, qwen2moe, qwen3moe)");
}

TEST(ModelErrors, MissingMetadataKeyIsNamed) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Error e = load_edited_stories({.metadata = [](GgufMetadata& md) { md.erase("llama.block_count"); }});
  EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
  EXPECT_EQ(e.subject(), "llama.block_count");
}

TEST(ModelErrors, MissingTensorIsNamed) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Error e = load_edited_stories({.dims = [](const GgufTensorInfo& t) -> std::optional<std::vector<uint64_t>> {
    if (t.name == "blk.3.ffn_up.weight") return std::nullopt;
    return t.dims;
  }});
  EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
  EXPECT_EQ(e.subject(), "blk.3.ffn_up.weight");
}

TEST(ModelErrors, WronglyShapedTensorNamesBothShapes) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  // Same element count, transposed: GGUF [64, 32] is [32, 64] in the IR.
  const Error e = load_edited_stories({.dims = [](const GgufTensorInfo& t) -> std::optional<std::vector<uint64_t>> {
    if (t.name == "blk.1.attn_k.weight") return std::vector<uint64_t>{32, 64};
    return t.dims;
  }});
  EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
  EXPECT_EQ(e.subject(), "blk.1.attn_k.weight");
  EXPECT_NE(e.message().find("has shape [64, 32], expected [32, 64]"), std::string::npos) << e.message();
}

TEST(ModelErrors, TensorWithoutDecoderIsUnknownEncoding) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  // q8_1: a layout we know (ggml's activation format), but no decoder.
  const Error e = load_edited_stories({.encoding = [](const GgufTensorInfo& t) {
    return t.name == "blk.2.ffn_gate.weight" ? Encoding::Q8_1 : t.encoding;
  }});
  EXPECT_EQ(e.kind(), ErrorKind::UnknownEncoding);
  EXPECT_EQ(e.subject(), "blk.2.ffn_gate.weight");
  EXPECT_NE(e.message().find("q8_1"), std::string::npos) << e.message();
}

TEST(ModelErrors, TruncatedCheckpointIsTruncated) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesBin);
  std::ifstream in(shared_data(test::kStoriesBin), std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  test::TempDir dir;
  for (const size_t keep : {size_t{12}, bytes.size() / 2, bytes.size() - 4}) {
    const std::string path = dir.file("cut.bin");
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(keep));
    EXPECT_EQ(load_error(path).kind(), ErrorKind::Truncated) << keep << " bytes";
  }
}

TEST(ModelErrors, InconsistentCheckpointHeaderIsInvalid) {
  test::TempDir dir;
  const std::string path = dir.file("bad.bin");
  const int32_t header[7] = {64, 172, 5, 7, 4, 512, 512};  // 7 heads: dim 64 does not split
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(header), sizeof header);
  EXPECT_EQ(load_error(path).kind(), ErrorKind::InvalidValue);
}

}  // namespace
}  // namespace synapse
