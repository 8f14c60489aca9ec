// Text the CLI prints is valid UTF-8: the demo model of scripts/run.sh
// (random weights, which pick stray bytes) streams U+FFFD where its bytes
// are no text, and --raw gives the exact bytes back.
#include <gtest/gtest.h>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "synth/synth.h"
#include "tokenizer/utf8_stream.h"

namespace synapse {
namespace {

bool is_valid_utf8(const std::string& text) { return valid_utf8(text) == text; }

// scripts/run.sh's demo model.
std::string write_demo_model(const test::TempDir& dir) {
  SynthOptions options;
  options.arch = "llama";
  options.preset = "tiny";
  options.type = "q8_0";
  options.seed = 1;
  const std::string path = dir.file("demo.gguf");
  synth_model(options, path);
  return path;
}

TEST(CliUtf8, DemoRunPrintsValidUtf8AndRawKeepsTheBytes) {
  test::TempDir dir;
  const std::string model = write_demo_model(dir);
  const std::vector<std::string> args = {"run", "-m", model, "-n", "64", "--temp", "0"};
  const test::CommandResult text = test::run_synapse(args);
  std::vector<std::string> raw_args = args;
  raw_args.push_back("--raw");
  const test::CommandResult raw = test::run_synapse(raw_args);
  ASSERT_EQ(text.exit_code, 0);
  ASSERT_EQ(raw.exit_code, 0);
  EXPECT_TRUE(is_valid_utf8(text.out)) << text.out;
  EXPECT_EQ(text.out, valid_utf8(raw.out));
}

TEST(CliUtf8, DetokenizeReplacesALoneByteTokenUnlessRaw) {
  test::TempDir dir;
  const std::string model = write_demo_model(dir);
  // Byte-level vocabulary: id 226 is the byte 0xE2, the lead of a 3-byte character.
  EXPECT_EQ(test::run_synapse({"detokenize", "-m", model, "72", "226"}).out, "H\xEF\xBF\xBD\n");
  EXPECT_EQ(test::run_synapse({"detokenize", "-m", model, "--raw", "72", "226"}).out, "H\xE2\n");
  EXPECT_EQ(test::run_synapse({"detokenize", "-m", model, "72", "226", "130", "172"}).out, "H\xE2\x82\xAC\n");
}

}  // namespace
}  // namespace synapse
