// synapse quantize against llama.cpp's quantizer (synapse-peer quantize, i.e.
// llama_model_quantize): the same bytes, on stories260K's real weights and on
// synth models whose rows are whole K-quant blocks, without and with an
// importance matrix, and with per-tensor type overrides.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "quantize/imatrix_file.h"
#include "quantize/random_imatrix.h"
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

// Writes a random imatrix for `model` (random_imatrix.h: every block weight,
// experts with their own counts, one unused; token_embd's entry of the wrong
// size and one for an absent tensor, which llama.cpp both skips).
std::string imatrix_for(const std::string& model, const TempDir& dir, const std::string& name) {
  quant::write_imatrix(random_imatrix(model, 17, true), dir.file(name));
  return dir.file(name);
}

class QuantizePeerStoriesImatrix : public ::testing::TestWithParam<const char*> {};

// stories260K's rows (64, 172) give the legacy types weighted blocks and
// the K types their fallbacks (q5_0, q5_1, q8_0, f16).
TEST_P(QuantizePeerStoriesImatrix, BytesEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const std::string f32 = shared_data("gguf/stories260K-f32.gguf").string();
  if (!std::filesystem::exists(f32)) GTEST_SKIP() << "shared test data " << f32 << " is absent";
  TempDir dir;
  expect_same_bytes(f32, GetParam(), dir, {"--imatrix", imatrix_for(f32, dir, "imatrix.gguf")});
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizePeerStoriesImatrix,
                         ::testing::Values("q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q8_0", "q4_k_m"),
                         [](const auto& info) { return std::string(info.param); });

// Rows of 256: the weighted K-quant encoders; 8 blocks: q4_0's imatrix
// rule (ffn_down q4_1 in block 0); experts with their own importance.
TEST(QuantizePeerSynth, ImatrixQuantizationsEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string dense = dir.file("llama.gguf"), moe = dir.file("qwen2moe.gguf");
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "8", "-o", dense}).exit_code, 0);
  ASSERT_EQ(run_synapse({"synth", "--arch", "qwen2moe", "-o", moe}).exit_code, 0);
  const std::vector<std::string> dense_imatrix = {"--imatrix", imatrix_for(dense, dir, "dense.gguf")};
  for (const char* type : {"q4_k_m", "q5_k_m", "q6_k", "q4_0", "q5_1"})
    expect_same_bytes(dense, type, dir, dense_imatrix);
  expect_same_bytes(moe, "q4_k_m", dir, {"--imatrix", imatrix_for(moe, dir, "moe.gguf")});
}

// Rows of 96 and an FFN of 100: the K types' fallbacks (q5_0, q5_1, q8_0)
// weighted, and f16 where 32 does not divide the row either.
TEST(QuantizePeerSynth, ImatrixFallbacksEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string model = dir.file("odd.gguf");
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-embd", "96", "--n-head", "3", "--n-head-kv", "1",
                         "--n-ff", "100", "-o", model})
                .exit_code,
            0);
  const std::vector<std::string> imatrix = {"--imatrix", imatrix_for(model, dir, "odd-imatrix.gguf")};
  for (const char* type : {"q4_k_m", "q5_k", "q6_k"}) expect_same_bytes(model, type, dir, imatrix);
}

// A profile mixing q8_0, q6_K, q4_K and q4_0 over attention, FFN and
// layers, with patterns that overlap (the first match wins) and some the
// row fallbacks change on stories260K (rows of 64 and 172); the two flags
// come before it.
std::vector<std::string> profile_flags(const TempDir& dir) {
  std::ofstream(dir.file("profile.txt")) << "# attention of the first layer in 8 bits\n"
                                            "blk\\.0\\.attn_.*=q8_0\n"
                                            "attn_v=q6_K   attn_output=q4_0\n"
                                            "\n"
                                            "blk\\.[23]\\.ffn_(up|gate)=q4_0  # middle layers\n"
                                            "ffn_down=q4_K\n"
                                            "blk\\.7\\.=q6_K\n"
                                            "token_embd=q4_K\n";
  return {"--tensor-type", "blk\\.1\\.attn_q=Q8_0", "--tensor-type", "ffn_up=q6_k", "--profile",
          dir.file("profile.txt")};
}

TEST(QuantizePeerOverrides, StoriesWithAProfileEqualLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const std::string f32 = shared_data("gguf/stories260K-f32.gguf").string();
  if (!std::filesystem::exists(f32)) GTEST_SKIP() << "shared test data " << f32 << " is absent";
  TempDir dir;
  std::vector<std::string> flags = profile_flags(dir);
  for (const char* type : {"q4_k_m", "q4_0"}) expect_same_bytes(f32, type, dir, flags);
  flags.push_back("--pure");
  for (const char* type : {"q4_k_m", "q4_0"}) expect_same_bytes(f32, type, dir, flags);
}

// Rows of 256: the overrides' K-quants are real; 8 layers: the overridden
// attn_v and ffn_down tensors shift the q4_k_m mix's layer counters.
TEST(QuantizePeerOverrides, SynthLlamaWithAProfileEqualsLlamaCpps) {
  SYNAPSE_SKIP_UNLESS_PEER();
  TempDir dir;
  const std::string dense = dir.file("llama.gguf");
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "8", "-o", dense}).exit_code, 0);
  std::vector<std::string> flags = profile_flags(dir);
  for (const char* type : {"q4_k_m", "q4_0", "q5_k_m"}) expect_same_bytes(dense, type, dir, flags);
  flags.push_back("--pure");
  for (const char* type : {"q4_k_m", "q4_0"}) expect_same_bytes(dense, type, dir, flags);
}

}  // namespace
}  // namespace synapse::test
