// synapse find-model (what scripts/run.sh uses before synthesizing a model)
// on a fake HOME: $SYNAPSE_MODEL first, then the llama.cpp cache, the
// Hugging Face cache (snapshot symlinks into blobs/) and Ollama's blobs
// (GGUF by magic, not by name), then Hugging Face safetensors snapshots; and
// -m FOLDER holding one GGUF.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/command_runner.h"
#include "support/hf_folder_writer.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synth/synth.h"

namespace synapse {
namespace {

namespace fs = std::filesystem;

class FindModel : public testing::Test {
 protected:
  FindModel() : home_(dir_.file("home")), model_(test::write_tiny_model(dir_)) { fs::create_directories(home_); }

  // Puts a copy of the tiny model at HOME/relative.
  std::string place(const std::string& relative) {
    const fs::path path = fs::path(home_) / relative;
    fs::create_directories(path.parent_path());
    fs::copy_file(model_, path);
    return path.string();
  }
  void write_text(const std::string& relative, const std::string& text) {
    const fs::path path = fs::path(home_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  // Runs `synapse ARGS` with HOME set to the fake one and the caches'
  // own variables unset; stderr joins stdout when asked.
  test::CommandResult synapse(const std::string& args, const std::string& synapse_model = "",
                              bool with_stderr = false) {
    std::string command = "env -u LLAMA_CACHE -u HF_HUB_CACHE -u HF_HOME -u XDG_CACHE_HOME -u OLLAMA_MODELS";
    command += synapse_model.empty() ? " -u SYNAPSE_MODEL" : " SYNAPSE_MODEL=" + test::shell_quote(synapse_model);
    command += " HOME=" + test::shell_quote(home_) + " " + test::shell_quote(SYNAPSE_CLI_PATH) + " " + args;
    command += with_stderr ? " 2>&1" : " 2>/dev/null";
    return test::run_command(command);
  }

  test::TempDir dir_;
  std::string home_;
  std::string model_;
};

TEST_F(FindModel, NothingCachedExitsOneNamingTheFoldersSearched) {
  const test::CommandResult r = synapse("find-model", "", true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(".cache/llama.cpp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".ollama/models/blobs"), std::string::npos) << r.out;
}

TEST_F(FindModel, FindsTheLlamaCppCacheBeforeTheOthers) {
  place(".cache/huggingface/hub/models--org--tiny/blobs/0123abcd");
  const std::string llama = place(".cache/llama.cpp/org_tiny-GGUF_tiny-q8_0.gguf");
  EXPECT_EQ(synapse("find-model").out, llama + "\n");
  EXPECT_NE(synapse("find-model", "", true).out.find("llama.cpp cache"), std::string::npos);
}

TEST_F(FindModel, FollowsHuggingFaceSnapshotSymlinksIntoBlobs) {
  place(".cache/huggingface/hub/models--org--tiny/blobs/0123abcd");
  const fs::path snapshot = fs::path(home_) / ".cache/huggingface/hub/models--org--tiny/snapshots/rev1";
  fs::create_directories(snapshot);
  fs::create_symlink("../../blobs/0123abcd", snapshot / "tiny-q8_0.gguf");
  // A download in progress: a .gguf that is not (yet) a GGUF is no candidate.
  write_text(".cache/huggingface/hub/models--org--tiny/snapshots/rev1/a-partial.gguf", "not a model");
  const test::CommandResult r = synapse("find-model");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, (snapshot / "tiny-q8_0.gguf").string() + "\n");
}

// Snapshot folders of safetensors models come after every GGUF file, and
// only those of a family we run.
TEST_F(FindModel, FindsHuggingFaceSafetensorsFoldersAfterGgufFiles) {
  const fs::path hub = fs::path(home_) / ".cache/huggingface/hub";
  const std::string f32 = dir_.file("f32.gguf");
  synth_model(SynthOptions{}, f32);  // tiny, f32: what an HF folder holds
  const std::string ours = (hub / "models--org--tiny/snapshots/rev1").string();
  test::write_hf_folder(f32, ours);
  const std::string other = (hub / "models--org--bert/snapshots/rev1").string();
  test::write_hf_folder(f32, other);
  std::ofstream(other + "/config.json") << R"({"model_type": "bert"})";
  const test::CommandResult r = synapse("find-model");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, ours + "\n");
  const std::string gguf = place(".ollama/models/blobs/sha256-2222");
  EXPECT_EQ(synapse("find-model --all").out, gguf + "\n" + ours + "\n");
}

TEST_F(FindModel, TakesOllamaBlobsThatStartWithTheGgufMagic) {
  write_text(".ollama/models/blobs/sha256-0000", "{\"license\": \"not a model\"}");
  const std::string blob = place(".ollama/models/blobs/sha256-1111");
  const test::CommandResult r = synapse("find-model --all");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, blob + "\n");
}

TEST_F(FindModel, SynapseModelVariableComesFirstAndMayNameAFolder) {
  place(".cache/llama.cpp/cached.gguf");
  const std::string chosen = place("models/mine/model.gguf");
  EXPECT_EQ(synapse("find-model", chosen).out, chosen + "\n");
  EXPECT_EQ(synapse("find-model", fs::path(chosen).parent_path().string()).out, chosen + "\n");
  EXPECT_EQ(synapse("find-model", home_ + "/missing.gguf").exit_code, 2);
}

TEST(ModelFolder, RunTakesAFolderHoldingOneGgufAndListsSeveral) {
  test::TempDir dir;
  fs::create_directories(dir.file("one"));
  test::write_tiny_model(dir, "llama", "q8_0", "one/tiny.gguf");
  const test::CommandResult one =
      test::run_synapse({"run", "-m", dir.file("one"), "--tokens", "1", "-n", "2", "--temp", "0", "--ids"});
  EXPECT_EQ(one.exit_code, 0) << one.out;

  test::write_tiny_model(dir, "llama", "q8_0", "one/other.gguf");
  const test::CommandResult two = test::run_synapse({"run", "-m", dir.file("one"), "--tokens", "1"}, true);
  EXPECT_EQ(two.exit_code, 2) << two.out;
  EXPECT_NE(two.out.find("other.gguf"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("tiny.gguf"), std::string::npos) << two.out;

  fs::create_directories(dir.file("none"));
  const test::CommandResult none = test::run_synapse({"chat", "-m", dir.file("none")}, true);
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("no GGUF model"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace synapse
