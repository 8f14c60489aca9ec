// synapse quantize against llama.cpp's quantizer (synapse-peer quantize, i.e.
// llama_model_quantize): the same bytes, on stories260K's real weights and on
// synth models whose rows are whole K-quant blocks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/command_runner.h"
#include "support/temp_dir.h"

namespace synapse::test {
namespace {

std::vector<char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Quantizes `input` to `type` with both (`extra`: flags both take);
// expects identical files.
void expect_same_bytes(const std::string& input, const std::string& type, const TempDir& dir,
                       const std::vector<std::string>& extra = {}) {
  const std::string ours = dir.file("ours-" + type + ".gguf"), peer = dir.file("peer-" + type + ".gguf");
  std::vector<std::string> ours_args = {"quantize", input, ours, type, "-t", "2"};
  std::vector<std::string> peer_args = {"quantize", input, peer, type, "-t", "2"};
  ours_args.insert(ours_args.end(), extra.begin(), extra.end());
  peer_args.insert(peer_args.end(), extra.begin(), extra.end());
  const CommandResult a = run_synapse(ours_args);
  ASSERT_EQ(a.exit_code, 0) << type << ": " << a.out;
  const CommandResult b = run_peer(peer_args);
  ASSERT_EQ(b.exit_code, 0) << type << ": " << b.out;
  const std::vector<char> x = slurp(ours), y = slurp(peer);
  ASSERT_EQ(x.size(), y.size()) << type;
  size_t first = 0;
  while (first < x.size() && x[first] == y[first]) ++first;
  EXPECT_EQ(first, x.size()) << type << ": files differ from byte " << first;
}

class QuantizePeerStories : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantizePeerStories, BytesEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const std::string f32 = shared_data("gguf/stories260K-f32.gguf").string();
  if (!std::filesystem::exists(f32)) GTEST_SKIP() << "shared test data " << f32 << " is absent";
  TempDir dir;
  expect_same_bytes(f32, GetParam(), dir);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizePeerStories,
                         ::testing::Values("q8_0", "q4_0", "q5_0", "q4_k", "q6_k", "q4_1", "q5_1", "q5_k",
                                           "q4_k_m", "q5_k_m", "f16", "bf16"),
                         [](const auto& info) { return std::string(info.param); });

// stories260K's rows (64, 172) fit no K-quant block: these rows of 256 do,
// and 8 blocks exercise the mixes' layer choices.
TEST(QuantizePeerSynth, KQuantMixesEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string dense = dir.file("llama.gguf"), moe = dir.file("qwen2moe.gguf");
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "8", "-o", dense}).exit_code, 0);
  ASSERT_EQ(run_synapse({"synth", "--arch", "qwen2moe", "-o", moe}).exit_code, 0);
  for (const char* type : {"q4_k_m", "q5_k_m", "q4_k", "q5_k", "q6_k"}) expect_same_bytes(dense, type, dir);
  expect_same_bytes(moe, "q4_k_m", dir);
}

// --pure: no mix, every quantizable weight in the type's own encoding.
TEST(QuantizePeerSynth, PureTypesEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string dense = dir.file("llama.gguf");
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "8", "-o", dense}).exit_code, 0);
  for (const char* type : {"q4_k_m", "q4_0", "q6_k"}) expect_same_bytes(dense, type, dir, {"--pure"});
}

}  // namespace
}  // namespace synapse::test
