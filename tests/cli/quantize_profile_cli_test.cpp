// synapse quantize's precision profiles on the command line: --tensor-type
// and --profile (errors exit 2 naming the item or line, an unreadable file
// 1), and --target-bytes with a sensitivity table: a file within the
// target whose --profile-out reproduces it, exit 1 with the smallest size
// for a target below it or a table of another model, exit 2 for flags that
// do not go together.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "calibrate/hand_made_table.h"
#include "support/command_runner.h"
#include "support/temp_dir.h"

namespace synapse::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class QuantizeProfileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "2", "-o", input_}).exit_code, 0);
    const calibrate::SensitivityTable table =
        hand_made_table(input_, {Encoding::Q4_0, Encoding::Q4_K, Encoding::Q6_K, Encoding::Q8_0});
    std::ofstream(table_) << calibrate::to_json(table).dump(1);
  }
  CommandResult quantize(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"quantize", input_, output_, "q4_k_m", "-t", "2"};
    all.insert(all.end(), args.begin(), args.end());
    return run_synapse(all, true);
  }
  void expect_fails(const std::vector<std::string>& args, int code, const std::string& says) {
    const CommandResult r = quantize(args);
    EXPECT_EQ(r.exit_code, code) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(output_));
  }
  // The smallest file the table allows, from the message refusing 1 byte.
  uint64_t smallest_file() {
    const CommandResult r = quantize({"--target-bytes", "1", "--sensitivity", table_});
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.out, m, std::regex("allows is (\\d+) bytes"))) << r.out;
    return m.empty() ? 0 : std::stoull(m[1]);
  }

  TempDir dir_;
  std::string input_ = dir_.file("in.gguf");
  std::string output_ = dir_.file("out.gguf");
  std::string table_ = dir_.file("table.json");
};

TEST_F(QuantizeProfileCli, TensorTypesAndProfileApplyAndShowOnStderr) {
  std::ofstream(dir_.file("p.txt")) << "# ffn in 4 bits\nffn_.*=q4_0\n";
  const CommandResult r = quantize({"--tensor-type", "attn_v=q8_0", "--profile", dir_.file("p.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("blk.1.attn_v.weight: f32 -> q8_0 (override attn_v=q8_0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk.0.ffn_down.weight: f32 -> q4_0 (override ffn_.*=q4_0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk.0.attn_q.weight: f32 -> q4_K\n"), std::string::npos) << r.out;
}

TEST_F(QuantizeProfileCli, BadTensorTypesAndProfilesAreUsageErrors) {
  expect_fails({"--tensor-type", "attn_v"}, 2, "--tensor-type: 'attn_v': expected PATTERN=TYPE");
  expect_fails({"--tensor-type", "attn_v=q3_k"}, 2, "cannot encode q3_k");
  expect_fails({"--tensor-type", "attn_v=q4_k_m"}, 2, "unknown type 'q4_k_m'");
  std::ofstream(dir_.file("bad.txt")) << "attn_v=q8_0\n\n[ffn=q4_0\n";
  expect_fails({"--profile", dir_.file("bad.txt")}, 2, dir_.file("bad.txt") + ":3: '[ffn=q4_0': invalid regular");
  expect_fails({"--profile", dir_.file("absent.txt")}, 1, "cannot read the profile");
}

TEST_F(QuantizeProfileCli, TargetBytesFlagsThatDoNotGoTogetherExitTwo) {
  expect_fails({"--target-bytes", "1M"}, 2, "requires --sensitivity");
  expect_fails({"--sensitivity", table_}, 2, "requires --target-bytes");
  expect_fails({"--profile-out", dir_.file("p.txt")}, 2, "requires --target-bytes");
  expect_fails({"--target-bytes", "1M", "--sensitivity", table_, "--tensor-type", "attn_v=q8_0"}, 2, "excludes");
  expect_fails({"--target-bytes", "1M", "--sensitivity", table_, "--profile", table_}, 2, "excludes");
  expect_fails({"--target-bytes", "40%", "--sensitivity", table_}, 2, "is not a size");
  expect_fails({"--target-bytes", "12X", "--sensitivity", table_}, 2, "is not a size");
}

TEST_F(QuantizeProfileCli, TargetBytesWritesAFileWithinItsProfileReproduces) {
  const uint64_t least = smallest_file();
  ASSERT_GT(least, 0u);
  const uint64_t target = least + least / 4;
  const std::string profile = dir_.file("chosen.txt");
  const CommandResult r =
      quantize({"--target-bytes", std::to_string(target), "--sensitivity", table_, "--profile-out", profile});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const uint64_t size = std::filesystem::file_size(output_);
  EXPECT_LE(size, target);
  EXPECT_GT(size, least);
  EXPECT_NE(r.out.find("target: Attention(0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted KL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("file " + std::to_string(size) + " bytes"), std::string::npos) << r.out;

  const std::string by_profile = dir_.file("by-profile.gguf");
  ASSERT_EQ(run_synapse({"quantize", input_, by_profile, "q4_k_m", "--profile", profile}).exit_code, 0);
  EXPECT_EQ(slurp(by_profile), slurp(output_));

  // A size with a suffix: 1K is 1024 bytes, and far too small.
  std::filesystem::remove(output_);
  expect_fails({"--target-bytes", "1K", "--sensitivity", table_}, 1,
               "the smallest file the sensitivity table allows is " + std::to_string(least) + " bytes");
}

TEST_F(QuantizeProfileCli, TablesOfAnotherModelExitOne) {
  const std::string other = dir_.file("other.gguf");  // one layer: the table's blk.1 tensors are absent
  ASSERT_EQ(run_synapse({"synth", "--arch", "llama", "--n-layer", "1", "-o", other}).exit_code, 0);
  const CommandResult r =
      run_synapse({"quantize", other, output_, "q4_k_m", "--target-bytes", "1G", "--sensitivity", table_}, true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("another model"), std::string::npos) << r.out;
  std::ofstream(dir_.file("not.json")) << "{\"model\": 1}";
  expect_fails({"--target-bytes", "1G", "--sensitivity", dir_.file("not.json")}, 1, "not a sensitivity table");
}

}  // namespace
}  // namespace synapse::test
