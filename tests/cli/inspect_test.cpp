// synapse inspect: totals agree with the file, errors are one clear line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "synth/synth.h"

namespace synapse {
namespace {

test::CommandResult run_cli(const std::vector<std::string>& args) { return test::run_synapse(args, true); }

TEST(CliInspect, JsonTotalsMatchWhatTheFileHoldsForQwen25HalfBillionQ8) {
  test::TempDir dir;
  SynthOptions o;
  o.preset = "qwen2.5-0.5b";
  o.type = "q8_0";
  const std::string path = dir.file("qwen.gguf");
  synth_model(o, path);
  auto r = run_cli({"inspect", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  // Qwen2 with tied embeddings: 12 tensors per layer (norms, q/k/v with
  // biases, output, gate/up/down) plus the embedding and the final norm.
  const uint64_t layers = 24;
  EXPECT_EQ(j["totals"]["tensors"].get<uint64_t>(), layers * 12 + 2);
  EXPECT_EQ(j["tensors"].size(), layers * 12 + 2);
  uint64_t sum = 0, data_start = UINT64_MAX;
  for (const auto& t : j["tensors"]) {
    sum += t["bytes"].get<uint64_t>();
    data_start = std::min(data_start, t["offset"].get<uint64_t>());
  }
  EXPECT_EQ(j["totals"]["tensor_bytes"].get<uint64_t>(), sum);
  const uint64_t file_bytes = std::filesystem::file_size(path);
  EXPECT_EQ(j["totals"]["file_bytes"].get<uint64_t>(), file_bytes);
  // The data section holds exactly the tensors plus alignment padding.
  const uint64_t alignment = j["alignment"].get<uint64_t>();
  EXPECT_LE(sum, file_bytes - data_start);
  EXPECT_LT(file_bytes - data_start - sum, alignment * j["tensors"].size());
  EXPECT_EQ(j["architecture"], "qwen2");
  EXPECT_EQ(j["hyperparameters"]["block_count"], layers);
}

TEST(CliInspect, TakesTheFileAsModelFlagAsTheOtherCommandsDo) {
  test::TempDir dir;
  SynthOptions o;
  const std::string path = dir.file("tiny.gguf");
  synth_model(o, path);
  const auto positional = run_cli({"inspect", "--json", path});
  const auto flag = run_cli({"inspect", "--json", "-m", path});
  ASSERT_EQ(flag.exit_code, 0) << flag.out;
  EXPECT_EQ(flag.out, positional.out);
  EXPECT_EQ(run_cli({"inspect", "--model", path}).exit_code, 0);
}

TEST(CliInspect, MissingFileIsOneErrorLineAndExitCodeOne) {
  auto r = run_cli({"inspect", "/nonexistent/model.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("Io"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CliInspect, CorruptFileNamesTheErrorKindAndOffset) {
  test::TempDir dir;
  const std::string path = dir.file("bad.gguf");
  {
    std::ofstream out(path, std::ios::binary);
    out << "GGUF\x03";  // truncated header
  }
  auto r = run_cli({"inspect", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("Truncated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at byte"), std::string::npos) << r.out;
}

TEST(CliInspect, UnknownFlagIsAUsageErrorWithExitCodeTwo) {
  EXPECT_EQ(run_cli({"inspect", "--no-such-flag", "x.gguf"}).exit_code, 2);
  EXPECT_EQ(run_cli({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(run_cli({}).exit_code, 2);
}

}  // namespace
}  // namespace synapse
