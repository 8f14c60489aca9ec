// Our reference decoders against ggml's own (through synapse-peer dequant):
// on the same bytes the float values must be identical, for every encoding
// we decode, on blocks we wrote and on blocks llama.cpp's quantizer wrote.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <random>

#include "encoding/codec_list.h"
#include "encoding/encoding.h"
#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace synapse {
namespace {

std::vector<float> our_dequant(const GgufFile& f, const GgufTensorInfo& t) {
  const auto e = t.encoding;
  const uint64_t row = t.dims[0];
  const uint64_t rows = t.n_elements() / row;
  const uint64_t stride = row_bytes(e, row);
  std::vector<float> out(t.n_elements());
  auto data = f.tensor_data(t);
  for (uint64_t r = 0; r < rows; ++r)
    dequantize_row(e, data.data() + r * stride, out.data() + r * row, static_cast<int64_t>(row));
  return out;
}

// Compares every tensor of `path` decoded by us and by ggml, bit for bit.
void expect_same_as_ggml(const std::string& path, const test::TempDir& dir) {
  GgufFile f = GgufFile::open(path);
  int compared = 0;
  for (const auto& t : f.tensors()) {
    const EncodingInfo info = encoding_info(t.encoding);
    ASSERT_TRUE(info.has_codec) << t.name;
    const std::string out = dir.file("ggml.f32");
    auto r = test::run_peer({"dequant", path, t.name, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << t.name;
    std::vector<float> theirs = test::read_floats(out);
    std::vector<float> ours = our_dequant(f, t);
    ASSERT_EQ(theirs.size(), ours.size()) << t.name;
    for (size_t i = 0; i < ours.size(); ++i) {
      uint32_t a, b;
      std::memcpy(&a, &ours[i], 4);
      std::memcpy(&b, &theirs[i], 4);
      ASSERT_EQ(a, b) << t.name << " (" << info.name << ") element " << i << ": ours " << ours[i]
                      << ", ggml " << theirs[i];
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(PeerDequant, EveryEncodingWeWriteDecodesExactlyAsGgmlDoes) {
  SYNAPSE_SKIP_UNLESS_PEER();
  test::TempDir dir;
  GgufWriter w;
  w.metadata().set("general.architecture", "llama");
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  constexpr uint64_t kRow = 512, kRows = 6;
  for (Encoding e : kCodecs) {
    std::vector<float> values(kRow * kRows);
    for (auto& v : values) v = normal(rng);
    values[3] = 0.f;                                     // exact zero
    std::fill(values.begin() + kRow, values.begin() + 2 * kRow, 0.f);  // an all-zero row
    values[2 * kRow + 5] = 40.f;                         // an outlier
    for (uint64_t i = 3 * kRow; i < 4 * kRow; ++i) values[i] = -std::abs(values[i]);
    const uint64_t stride = row_bytes(e, kRow);
    std::vector<uint8_t> bytes(stride * kRows);
    for (uint64_t r = 0; r < kRows; ++r)
      quantize_row(e, values.data() + r * kRow, bytes.data() + r * stride, kRow);
    w.add_tensor_bytes(std::string("t.") + encoding_info(e).name,
                       {kRow, kRows}, e, std::move(bytes));
  }
  w.write(dir.file("codecs.gguf"));
  expect_same_as_ggml(dir.file("codecs.gguf"), dir);
}

TEST(PeerDequant, LlamaCppQuantizedFilesDecodeExactlyAsGgmlDoes) {
  SYNAPSE_SKIP_UNLESS_PEER();
  test::TempDir dir;
  int files = 0;
  for (const char* name : {"stories260K-q4_0.gguf", "stories260K-q5_0.gguf",
                           "stories260K-q8_0.gguf", "stories260K-f16.gguf"}) {
    auto path = test::shared_data(std::string("gguf/") + name);
    if (!std::filesystem::exists(path)) continue;
    expect_same_as_ggml(path.string(), dir);
    ++files;
  }
  if (files == 0) GTEST_SKIP() << "shared test data not found (../shared/data/gguf)";
}

}  // namespace
}  // namespace synapse
