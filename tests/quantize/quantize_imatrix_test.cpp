// synapse quantize with an importance matrix: which tensors it weighs, the
// rows of each expert with that expert's importance, the metadata llama-
// quantize records, and the imatrix errors llama.cpp has (its bytes are
// compared with llama.cpp's in quantize_peer_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "format/gguf_reader.h"
#include "quantize/imatrix_file.h"
#include "quantize/quantize_model.h"
#include "quantize/random_imatrix.h"
#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::quant {
namespace {

std::string synth_f32(const test::TempDir& dir, const std::string& arch) {
  SynthOptions o;
  o.arch = arch;
  o.preset = "tiny";
  o.type = "f32";
  o.seed = 5;
  o.n_layer = 2;
  synth_model(o, dir.file(arch + ".gguf"));
  return dir.file(arch + ".gguf");
}

QuantizeSummary quantize(const std::string& in, const std::string& out, const std::string& type,
                         const std::string& imatrix) {
  QuantizeOptions o;
  o.input = in;
  o.output = out;
  o.type = find_quant_type(type);
  o.threads = 2;
  o.imatrix_file = imatrix;
  return quantize_model(o);
}

std::vector<uint8_t> tensor_bytes(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo* t = f.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  const auto bytes = f.tensor_data(*t);
  return {bytes.begin(), bytes.end()};
}

// Tensors with an entry of the right size are encoded with it, the others
// (no entry; token_embd's entry of the wrong size) as without an imatrix.
TEST(QuantizeImatrix, TensorsWithAnEntryAreWeightedAndTheOthersAreNot) {
  test::TempDir dir;
  const std::string in = synth_f32(dir, "llama");
  const Imatrix m = test::random_imatrix(in, 1, true);
  write_imatrix(m, dir.file("imatrix.gguf"));
  const QuantizeSummary with = quantize(in, dir.file("with.gguf"), "q4_k_m", dir.file("imatrix.gguf"));
  quantize(in, dir.file("without.gguf"), "q4_k_m", "");
  const GgufFile a = GgufFile::open(dir.file("with.gguf")), b = GgufFile::open(dir.file("without.gguf"));
  size_t weighted = 0;
  for (const GgufTensorInfo& t : a.tensors()) {
    const bool has_entry = m.entries.count(t.name) > 0 && t.name != "token_embd.weight";
    const bool converted = t.encoding != Encoding::F32;
    weighted += has_entry && converted;
    EXPECT_EQ(tensor_bytes(a, t.name) != tensor_bytes(b, t.name), has_entry && converted) << t.name;
  }
  EXPECT_GT(weighted, 10u);
  EXPECT_EQ(with.weighted, weighted);
}

// Each expert of a 3-D tensor is encoded with its own importance row (the
// last one, which saw no tokens, with importance 1 everywhere).
TEST(QuantizeImatrix, ExpertsAreEncodedWithTheirOwnImportance) {
  test::TempDir dir;
  const std::string in = synth_f32(dir, "qwen2moe");
  const Imatrix m = test::random_imatrix(in, 2);
  write_imatrix(m, dir.file("imatrix.gguf"));
  quantize(in, dir.file("q.gguf"), "q6_k", dir.file("imatrix.gguf"));
  const std::string name = "blk.1.ffn_up_exps.weight";
  const GgufFile src = GgufFile::open(in), q = GgufFile::open(dir.file("q.gguf"));
  const GgufTensorInfo& t = *q.find_tensor(name);
  ASSERT_EQ(t.encoding, Encoding::Q6_K);
  ASSERT_EQ(t.dims.size(), 3u);
  const uint64_t row = t.dims[0], rows = t.dims[1], row_size = row_bytes(Encoding::Q6_K, row);
  const std::vector<float> weights = importance(m.entries.at(name));
  const std::vector<uint8_t> input = tensor_bytes(src, name), output = tensor_bytes(q, name);
  for (uint64_t expert = 0; expert < t.dims[2]; ++expert) {
    const uint64_t r = expert * rows + 3;
    std::vector<uint8_t> want(row_size);
    quantize_row_weighted(Encoding::Q6_K, reinterpret_cast<const float*>(input.data()) + r * row, want.data(),
                          static_cast<int64_t>(row), weights.data() + expert * row);
    const std::vector<uint8_t> got(output.begin() + static_cast<std::ptrdiff_t>(r * row_size),
                                   output.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_size));
    EXPECT_EQ(got, want) << "expert " << expert;
  }
}

// llama-quantize's kv_overrides come after general.file_type.
TEST(QuantizeImatrix, TheImatrixIsRecordedInTheLastKeys) {
  test::TempDir dir;
  const std::string in = synth_f32(dir, "llama");
  const Imatrix m = test::random_imatrix(in, 3);
  write_imatrix(m, dir.file("imatrix.gguf"));
  quantize(in, dir.file("q.gguf"), "q8_0", dir.file("imatrix.gguf"));
  const GgufFile q = GgufFile::open(dir.file("q.gguf"));
  const auto& keys = q.metadata().entries();
  ASSERT_GE(keys.size(), 5u);
  EXPECT_EQ(keys[keys.size() - 5].first, "general.file_type");
  EXPECT_EQ(keys[keys.size() - 4].first, "quantize.imatrix.file");
  EXPECT_EQ(keys[keys.size() - 4].second.as_string(), dir.file("imatrix.gguf"));
  EXPECT_EQ(keys[keys.size() - 3].second.as_string(), "calibration.txt");
  EXPECT_EQ(keys[keys.size() - 2].second.as_int(), static_cast<int64_t>(m.entries.size()));
  EXPECT_EQ(keys[keys.size() - 1].first, "quantize.imatrix.chunks_count");
  EXPECT_EQ(keys[keys.size() - 1].second.as_int(), 12);
}

// llama.cpp refuses an entry whose size is not the row length times the
// experts (a model the imatrix was not made for); nothing is written.
TEST(QuantizeImatrix, AnEntryOfTheWrongSizeIsAnErrorNamingTheTensor) {
  test::TempDir dir;
  const std::string in = synth_f32(dir, "llama");
  Imatrix m = test::random_imatrix(in, 4);
  ImatrixEntry& e = m.entries.at("blk.1.attn_q.weight");
  e.in_sum2.resize(e.in_sum2.size() / 2);
  write_imatrix(m, dir.file("imatrix.gguf"));
  try {
    quantize(in, dir.file("q.gguf"), "q4_0", dir.file("imatrix.gguf"));
    FAIL() << "quantized with a mismatched imatrix";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
    EXPECT_EQ(error.subject(), "blk.1.attn_q.weight");
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("q.gguf")));
}

TEST(QuantizeImatrix, CommandLineNamesABadImatrixFile) {
  test::TempDir dir;
  const std::string in = synth_f32(dir, "llama");
  std::ofstream(dir.file("bad.dat")) << "not an imatrix";
  const test::CommandResult r =
      test::run_synapse({"quantize", in, dir.file("q.gguf"), "q4_0", "--imatrix", dir.file("bad.dat")}, true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("imatrix " + dir.file("bad.dat")), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("q.gguf")));
}

}  // namespace
}  // namespace synapse::quant
