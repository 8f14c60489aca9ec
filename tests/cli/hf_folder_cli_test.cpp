// The shared stories260K Hugging Face folder through the CLI: run with a
// tokenizer given apart, the BF16 copy within its rounding, and `synapse
// convert` to a GGUF that both Synapse and llama.cpp (synapse-peer) run as
// run.c does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "format/gguf_reader.h"
#include "support/hf_folder_writer.h"
#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synth/synth.h"

namespace synapse {
namespace {

constexpr int kVocab = 512;
const std::string kFolder = "hf-models/stories260K-hf";
const std::string kTokenizer = "stories260K/tok512.model";

#define SKIP_WITHOUT_HF_FOLDER()                                                               \
  if (!std::filesystem::exists(test::shared_data(kFolder)) ||                                   \
      !std::filesystem::exists(test::shared_data("reference/s260_greedy_noprompt.ids")))        \
  GTEST_SKIP() << "shared test data " << test::shared_data(kFolder) << " is absent: HF folder tests skipped"

std::vector<int32_t> runc_ids() {
  std::ifstream in(test::shared_data("reference/s260_greedy_noprompt.ids"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("next_ids:", 0) == 0) return test::parse_ids(line.substr(9));
  return {};
}

std::vector<int32_t> greedy_ids(const std::string& model, const std::string& dump = "") {
  std::vector<std::string> args = {"run", "-m", model, "--tokens", "1", "-n", "256", "--temp", "0", "--ignore-eos",
                                   "--ids", "--cache-type-k", "f32", "--cache-type-v", "f32"};
  if (!dump.empty()) args.insert(args.end(), {"--dump-logits", dump});
  const test::CommandResult r = test::run_synapse(args);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return test::parse_ids(test::last_line(r.out));
}

// BF16 weights round each F32 weight to 8 significant bits: the logits move
// by up to about 0.13 and a near-tie in run.c's choices can flip, so the
// tokens follow run.c for a while (185 of 256 steps on AVX-512), and the
// logits stay close until they part.
TEST(HfFolderCli, Bf16SafetensorsFollowRunCWithinRounding) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::TempDir dir;
  const std::vector<int32_t> ref = runc_ids();
  const std::vector<float> ref_logits = test::read_floats(test::shared_data("reference/s260_greedy_noprompt.logits.f32"));
  const std::string dump = dir.file("bf16.f32");
  const std::vector<int32_t> ours = greedy_ids(test::shared_data(kFolder + "/model.bf16.safetensors"), dump);
  size_t same = 0;
  while (same < ours.size() && same < ref.size() && ours[same] == ref[same]) ++same;
  EXPECT_GE(same, 100u);
  const std::vector<float> logits = test::read_floats(dump);
  float worst = 0;
  for (size_t i = 0; i < (same + 1) * kVocab && i < logits.size(); ++i)
    worst = std::max(worst, std::abs(logits[i] - ref_logits[i]));
  EXPECT_LT(worst, 0.25f);
}

TEST(HfFolderCli, PromptTextWithATokenizerGivenApartRunsLikeTheGguf) {
  SKIP_WITHOUT_HF_FOLDER();
  const std::vector<std::string> tail = {"-p", "Once upon a time", "-n", "40", "--temp", "0"};
  std::vector<std::string> hf = {"run", "-m", test::shared_data(kFolder), "--tokenizer", test::shared_data(kTokenizer)};
  std::vector<std::string> gguf = {"run", "-m", test::shared_data("gguf/stories260K-f32.gguf")};
  hf.insert(hf.end(), tail.begin(), tail.end());
  gguf.insert(gguf.end(), tail.begin(), tail.end());
  const test::CommandResult a = test::run_synapse(hf), b = test::run_synapse(gguf);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("Once upon a time"), std::string::npos) << a.out;
}

TEST(HfFolderCli, FolderWithoutATokenizerPrintsIdsAndSaysWhy) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::CommandResult r =
      test::run_synapse({"run", "-m", test::shared_data(kFolder), "--tokens", "1", "-n", "4"}, /*with_stderr=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--tokenizer"), std::string::npos) << r.out;
  const test::CommandResult p = test::run_synapse({"run", "-m", test::shared_data(kFolder), "-p", "Once"}, true);
  EXPECT_NE(p.exit_code, 0);
}

// convert: the GGUF gives run.c's 256 tokens in Synapse and in llama.cpp.
TEST(HfFolderCli, ConvertedFolderRunsAsRunCInSynapseAndLlamaCpp) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::TempDir dir;
  const std::string out = dir.file("stories-hf.gguf");
  const test::CommandResult r = test::run_synapse(
      {"convert", test::shared_data(kFolder), "-o", out, "--tokenizer", test::shared_data(kTokenizer)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(greedy_ids(out), runc_ids());
  const GgufFile file = GgufFile::open(out);
  EXPECT_EQ(file.metadata().get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(file.metadata().get_int("general.file_type"), 0);

  if (!test::peer_available()) GTEST_SKIP() << "synapse-peer (llama.cpp) is not installed: peer half skipped";
  const test::CommandResult peer = test::run_peer({"greedy", out, "-n", "256", "--kv", "f32", "1"});
  ASSERT_EQ(peer.exit_code, 0) << peer.out;
  EXPECT_EQ(test::parse_ids(peer.out), runc_ids());
}

TEST(HfFolderCli, ConvertToQ8_0AppliesTheQuantizersRules) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::TempDir dir;
  const std::string out = dir.file("stories-q8_0.gguf");
  const test::CommandResult r = test::run_synapse({"convert", test::shared_data(kFolder), "-o", out, "--type", "q8_0",
                                                   "--tokenizer", test::shared_data(kTokenizer)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const GgufFile file = GgufFile::open(out);
  EXPECT_EQ(file.metadata().get_int("general.file_type"), 7);  // LLAMA_FTYPE_MOSTLY_Q8_0
  EXPECT_FALSE(std::filesystem::exists(out + ".source.gguf"));
  const std::vector<int32_t> ids = greedy_ids(out);
  EXPECT_EQ(ids.size(), 256u);
}

// --quantize runs the folder as the file `convert --type` writes.
TEST(HfFolderCli, QuantizeAtLoadRunsAsTheConvertedFile) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::TempDir dir;
  const std::string out = dir.file("q4_k_m.gguf");
  ASSERT_EQ(test::run_synapse({"convert", test::shared_data(kFolder), "-o", out, "--type", "q4_k_m", "--tokenizer",
                               test::shared_data(kTokenizer)})
                .exit_code,
            0);
  const std::vector<std::string> tail = {"--tokens", "1 403 407", "-n", "48", "--temp", "0", "--ids"};
  std::vector<std::string> at_load = {"run", "-m", test::shared_data(kFolder), "--quantize", "q4_k_m", "--tokenizer",
                                      test::shared_data(kTokenizer)};
  std::vector<std::string> converted = {"run", "-m", out};
  at_load.insert(at_load.end(), tail.begin(), tail.end());
  converted.insert(converted.end(), tail.begin(), tail.end());
  const test::CommandResult a = test::run_synapse(at_load), b = test::run_synapse(converted);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(test::run_synapse({"run", "-m", test::shared_data(kFolder), "--quantize", "q9", "--tokens", "1"}).exit_code, 2);
}

// A folder's own tokenizer.json (Qwen 2.5's, with its NFC normalizer) and
// chat template: prompt text runs as in the GGUF the folder came from, and
// convert carries both into the file.
TEST(HfFolderCli, TokenizerJsonAndChatTemplateComeFromTheFolder) {
  const std::filesystem::path tokenizer = test::shared_data("hf-tokenizers/qwen2_5/tokenizer.json");
  if (!std::filesystem::exists(tokenizer)) GTEST_SKIP() << "shared test data " << tokenizer << " is absent";
  const test::TempDir dir;
  SynthOptions o;
  o.arch = "qwen2";
  o.type = "bf16";
  o.n_embd = 64;
  o.n_head = 4;
  o.n_head_kv = 2;
  o.n_ff = 128;
  o.vocab_file = tokenizer.string();
  o.seed = 5;
  const std::string gguf = dir.file("qwen.gguf"), folder = dir.file("hf");
  synth_model(o, gguf);
  test::write_hf_folder(gguf, folder);
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"})
    std::filesystem::copy_file(tokenizer.parent_path() / name, folder + "/" + name);
  const std::string out = dir.file("converted.gguf");
  ASSERT_EQ(test::run_synapse({"convert", folder, "-o", out}).exit_code, 0);

  const std::vector<std::string> tail = {"-p", "Hello, world! <|im_start|>user", "-n", "12", "--temp", "0"};
  std::string expected;
  for (const std::string& model : {gguf, folder, out}) {
    std::vector<std::string> args = {"run", "-m", model};
    args.insert(args.end(), tail.begin(), tail.end());
    const test::CommandResult r = test::run_synapse(args);
    ASSERT_EQ(r.exit_code, 0) << model << "\n" << r.out;
    if (expected.empty()) expected = r.out;
    EXPECT_EQ(r.out, expected) << model;
  }
  const nlohmann::json config = nlohmann::json::parse(std::ifstream(tokenizer.parent_path() / "tokenizer_config.json"));
  const GgufFile file = GgufFile::open(out);
  EXPECT_EQ(file.metadata().get_string("tokenizer.chat_template"), config.at("chat_template").get<std::string>());
  EXPECT_EQ(file.metadata().get_string("tokenizer.ggml.pre"), "qwen2");
}

// inspect shows a folder as Synapse reads it: llama.cpp's keys and names.
TEST(HfFolderCli, InspectShowsTheFolderUnderLlamaCppNames) {
  SKIP_WITHOUT_HF_FOLDER();
  const test::CommandResult r = test::run_synapse({"inspect", test::shared_data(kFolder), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("format"), "Hugging Face folder (model_type llama)");
  EXPECT_EQ(j.at("architecture"), "llama");
  EXPECT_EQ(j.at("hyperparameters").at("block_count"), 5);
  EXPECT_EQ(j.at("totals").at("tensors"), 2 + 5 * 9);  // embedding, output norm; 9 per layer; tied output
  EXPECT_EQ(j.at("tensors").at(0).at("name"), "token_embd.weight");
}

TEST(HfFolderCli, BadConvertFlagsAreUsageErrors) {
  const test::TempDir dir;
  EXPECT_EQ(test::run_synapse({"convert", dir.file("absent"), "-o", dir.file("x.gguf")}).exit_code, 2);
  EXPECT_EQ(test::run_synapse({"convert", dir.file(""), "-o", dir.file("x.gguf"), "--type", "q9_9"}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.gguf")));
}

}  // namespace
}  // namespace synapse
