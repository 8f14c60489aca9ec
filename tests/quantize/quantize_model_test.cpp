// The quantizer on synth models: llama.cpp's per-tensor types (the same as
// synth writes for the type), metadata and order as llama.cpp writes them,
// bytes independent of the thread count, and typed errors that leave no
// output behind.
#include "quantize/quantize_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "format/gguf_reader.h"
#include "quantize/tensor_category.h"
#include "support/error_kind.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "support/tensor_encodings.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::quant {
namespace {

std::string synth(const test::TempDir& dir, const std::string& arch, const std::string& type,
                  const std::string& name, uint32_t n_layer = 2) {
  SynthOptions o;
  o.arch = arch;
  o.preset = "tiny";
  o.type = type;
  o.seed = 11;
  o.n_layer = n_layer;
  synth_model(o, dir.file(name));
  return dir.file(name);
}

QuantizeSummary quantize(const std::string& in, const std::string& out, const std::string& type, int threads = 2,
                         bool allow_requantize = false) {
  QuantizeOptions o;
  o.input = in;
  o.output = out;
  o.type = find_quant_type(type);
  o.threads = threads;
  o.allow_requantize = allow_requantize;
  return quantize_model(o);
}

// `synapse synth --type T` and `synapse quantize` of the F32 twin share
// llama.cpp's rules: every tensor gets the same encoding.
TEST(QuantizeModel, F32SynthQuantizedGetsTheTypesSynthWritesForTheType) {
  test::TempDir dir;
  const struct {
    const char* arch;
    uint32_t n_layer;
    std::vector<const char*> types;
  } cases[] = {
      {"llama", 8, {"q4_k_m", "q5_k_m", "q4_k", "q6_k"}},
      {"qwen2moe", 2, {"q4_k_m", "q8_0"}},
      {"qwen3", 2, {"q5_k", "f16"}},
  };
  for (const auto& c : cases) {
    const std::string f32 = synth(dir, c.arch, "f32", "f32.gguf", c.n_layer);
    for (const char* type : c.types) {
      const std::string direct = synth(dir, c.arch, type, "direct.gguf", c.n_layer);
      quantize(f32, dir.file("q.gguf"), type);
      EXPECT_EQ(test::tensor_encodings(dir.file("q.gguf")), test::tensor_encodings(direct)) << c.arch << " " << type;
    }
  }
}

TEST(QuantizeModel, WritesLlamaCppsMetadataAndTensorOrder) {
  test::TempDir dir;
  const std::string in = synth(dir, "llama", "f32", "in.gguf");
  const QuantizeSummary s = quantize(in, dir.file("q.gguf"), "Q8_0");
  const GgufFile src = GgufFile::open(in), q = GgufFile::open(dir.file("q.gguf"));
  EXPECT_EQ(s.tensors, src.tensors().size());

  // Every key of the input, in order, then the two llama.cpp sets last.
  const auto& keys = q.metadata().entries();
  ASSERT_EQ(keys.size(), src.metadata().size() + 1);  // + general.quantization_version
  EXPECT_EQ(keys[keys.size() - 2].first, "general.quantization_version");
  EXPECT_EQ(keys.back().first, "general.file_type");
  EXPECT_EQ(q.metadata().get_int("general.file_type"), 7);
  EXPECT_EQ(keys.back().second.type(), GgufType::Uint32);
  size_t k = 0;
  for (const auto& [key, value] : src.metadata().entries()) {
    if (key == "general.file_type") continue;
    EXPECT_EQ(keys[k++].first, key);
  }

  // By block (-1 first), then name.
  const auto& tensors = q.tensors();
  ASSERT_EQ(tensors.size(), src.tensors().size());
  EXPECT_EQ(tensors.front().name, "output_norm.weight");
  for (size_t i = 1; i < tensors.size(); ++i) {
    const int a = block_index(tensors[i - 1].name), b = block_index(tensors[i].name);
    EXPECT_TRUE(a < b || (a == b && tensors[i - 1].name < tensors[i].name)) << tensors[i].name;
  }
}

TEST(QuantizeModel, TheThreadCountChangesNoByte) {
  test::TempDir dir;
  const std::string in = synth(dir, "qwen2moe", "f32", "in.gguf");
  quantize(in, dir.file("a.gguf"), "q4_k_m", 1);
  quantize(in, dir.file("b.gguf"), "q4_k_m", 3);
  EXPECT_EQ(test::read_bytes(dir.file("a.gguf")), test::read_bytes(dir.file("b.gguf")));
}

TEST(QuantizeModel, F16InputIsDecodedFirst) {
  test::TempDir dir;
  const std::string in = synth(dir, "llama", "f16", "in.gguf");
  quantize(in, dir.file("q.gguf"), "q8_0");
  EXPECT_EQ(test::tensor_encodings(dir.file("q.gguf")).at("blk.0.attn_q.weight"), Encoding::Q8_0);
}

TEST(QuantizeModel, RequantizingNeedsToBeAllowed) {
  test::TempDir dir;
  const std::string in = synth(dir, "llama", "q8_0", "in.gguf");
  const std::string out = dir.file("q.gguf");
  EXPECT_EQ(test::error_kind([&] { quantize(in, out, "q4_0"); }), ErrorKind::InvalidValue);
  EXPECT_FALSE(std::filesystem::exists(out));
  quantize(in, out, "q8_0");  // the same type: copied, nothing re-encoded
  EXPECT_EQ(test::tensor_encodings(out).at("blk.0.attn_q.weight"), Encoding::Q8_0);
  quantize(in, out, "q4_0", 2, true);
  EXPECT_EQ(test::tensor_encodings(out).at("blk.0.attn_q.weight"), Encoding::Q4_0);
}

TEST(QuantizeModel, BadInputsAreTypedErrorsAndLeaveNoOutput) {
  test::TempDir dir;
  const std::string out = dir.file("q.gguf");
  EXPECT_EQ(test::error_kind([&] { quantize(dir.file("absent.gguf"), out, "q8_0"); }), ErrorKind::Io);

  const std::vector<uint8_t> whole = test::read_bytes(synth(dir, "llama", "f32", "in.gguf"));
  std::ofstream(dir.file("cut.gguf"), std::ios::binary)
      .write(reinterpret_cast<const char*>(whole.data()), static_cast<std::streamsize>(whole.size() / 2));
  const ErrorKind cut = test::error_kind([&] { quantize(dir.file("cut.gguf"), out, "q8_0"); });
  EXPECT_TRUE(cut == ErrorKind::Truncated || cut == ErrorKind::OutOfBounds) << to_string(cut);

  EXPECT_EQ(test::error_kind([&] { quantize(dir.file("in.gguf"), dir.file("no/such/dir/q.gguf"), "q8_0"); }),
            ErrorKind::Io);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".part"));
}

}  // namespace
}  // namespace synapse::quant
