// --drop-layers on run, bench and perplexity: the trace marks the dropped
// layers' regions UserDropped with no bytes read, every event and every
// report says QualityBounded, and a layer the model lacks or a malformed
// list is a usage error (exit 2) before anything runs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/command_runner.h"
#include "support/tiny_model.h"

namespace synapse {
namespace {

TEST(DropLayersCli, RunTracesDroppedRegionsAsUserDroppedAndReportsQualityBounded) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const std::string trace = dir.file("trace.jsonl");
  auto run = test::run_synapse({"run", "-m", model, "--tokens", "1 17 300", "-n", "3", "--temp", "0", "--ignore-eos",
                                "--drop-layers", "1", "--trace-regions", trace},
                               true);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("numerical mode: QualityBounded (layer 1 dropped)"), std::string::npos) << run.out;
  std::ifstream in(trace);
  std::string line;
  int dropped = 0, events = 0;
  while (std::getline(in, line)) {
    ++events;
    EXPECT_NE(line.find("\"mode\":\"QualityBounded\""), std::string::npos) << line;
    const bool layer_1 = line.find("\"layer\":1,") != std::string::npos;
    if (!layer_1) continue;
    ++dropped;
    EXPECT_NE(line.find("\"provenance\":\"UserDropped\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"weight_bytes_touched\":0,"), std::string::npos) << line;
  }
  EXPECT_GT(events, 0);
  EXPECT_EQ(dropped, 3 * 7);  // 3 steps; attention, router, 4 experts, merge
}

TEST(DropLayersCli, BenchJsonSaysQualityBoundedAndTheLayers) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "llama", "q8_0");
  auto bench = test::run_synapse({"bench", "-m", model, "-p", "8", "-n", "0", "-r", "1", "-o", "jsonl",
                                  "--drop-layers", "0"});
  ASSERT_EQ(bench.exit_code, 0);
  EXPECT_NE(bench.out.find("\"numerical_mode\":\"QualityBounded\""), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("\"dropped_layers\":[0]"), std::string::npos) << bench.out;
  auto plain = test::run_synapse({"bench", "-m", model, "-p", "8", "-n", "0", "-r", "1", "-o", "jsonl"});
  EXPECT_NE(plain.out.find("\"numerical_mode\":\"EquivalentNumerics\""), std::string::npos) << plain.out;
}

TEST(DropLayersCli, MissingLayerOrMalformedListIsAUsageError) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "llama", "q8_0");
  for (const char* layers : {"2", "1,x", "-1"}) {
    auto run = test::run_synapse({"run", "-m", model, "--tokens", "1 2", "-n", "1", "--drop-layers", layers}, true);
    EXPECT_EQ(run.exit_code, 2) << layers << ": " << run.out;
  }
}

}  // namespace
}  // namespace synapse
