// synapse tokenize --bench FILE: encodes the file and reports its size, the
// token count and the speed as one JSON line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "tokenizer/tokenizer.h"

namespace synapse {
namespace {

TEST(TokenizeBenchCli, ReportsBytesTokensAndSpeedOfTheFile) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "qwen2");
  const std::string text = "the quick brown fox jumps over the lazy dog\n12345 caf\xC3\xA9 <|im_start|>\n";
  std::ofstream(dir.file("text.txt")) << text;
  const test::CommandResult r =
      test::run_synapse({"tokenize", "-m", model, "--bench", dir.file("text.txt"), "--bench-runs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report.at("bytes").get<size_t>(), text.size());
  // No BOS, special tokens not matched.
  EXPECT_EQ(report.at("tokens").get<size_t>(), load_tokenizer(model)->encode(text, false, false).size());
  EXPECT_GT(report.at("mb_per_s").get<double>(), 0.0);
}

TEST(TokenizeBenchCli, TextOrBenchIsRequired) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "qwen2");
  EXPECT_EQ(test::run_synapse({"tokenize", "-m", model}).exit_code, 2);
}

}  // namespace
}  // namespace synapse
