// synapse run --trace-regions and synapse trace on a tiny OLMoE: every region
// of every step is in the trace, Skipped experts with zero bytes; the summary
// counts executed and skipped regions per step, bytes per token and the
// expert histogram per layer, and draws the heatmap.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "exec/region_trace_summary.h"
#include "support/command_runner.h"
#include "support/test_files.h"
#include "support/tiny_model.h"
#include "synapse/error.h"

namespace synapse {
namespace {

TEST(TraceCli, RunTraceHasSkippedExpertsAndTraceSummarizesThem) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const std::string trace = dir.file("trace.jsonl"), svg = dir.file("heat.svg");
  auto run = test::run_synapse({"run", "-m", model, "--tokens", "1 17 300", "-n", "4", "--temp", "0",
                                "--ignore-eos", "--trace-regions", trace});
  ASSERT_EQ(run.exit_code, 0);
  std::ifstream in(trace);
  const exec::TraceSummary summary = exec::summarize_trace(in);
  // The prompt step, then one step per generated token but the last.
  ASSERT_EQ(summary.steps.size(), 4u);
  EXPECT_EQ(summary.steps[0].tokens, 3);
  const uint32_t regions = summary.regions;  // embedding, logits; per layer attention, router, 4 experts, merge
  EXPECT_EQ(regions, 2u + 2u * 7u);
  for (size_t i = 1; i < summary.steps.size(); ++i) {
    const exec::TraceStep& step = summary.steps[i];
    EXPECT_EQ(step.tokens, 1);
    EXPECT_EQ(step.executed + step.skipped, regions);
    EXPECT_EQ(step.skipped, 2u * (4u - 2u));  // top-2 of 4 experts in each of 2 layers
    EXPECT_EQ(step.activity.find('?'), std::string::npos);
  }
  ASSERT_EQ(summary.expert_histogram.size(), 2u);
  for (const auto& [layer, counts] : summary.expert_histogram) {
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    EXPECT_GE(total, 3u * 2u) << layer;  // decode steps run exactly 2; the prompt step at least 2
  }
  EXPECT_NE(test::read_text(trace).find("\"outcome\":\"Skipped\""), std::string::npos);

  auto out = test::run_synapse({"trace", trace, "--heatmap", svg});
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_NE(out.out.find("steps 4, tokens 6, regions 16"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("layer 1:"), std::string::npos) << out.out;
  const std::string heat = test::read_text(svg);
  EXPECT_EQ(heat.rfind("<svg", 0), 0u);
  EXPECT_NE(heat.find("#dde7f0"), std::string::npos);  // skipped cells
}

TEST(TraceCli, CacheSimComparesPoliciesWithTheOptimalOnARunsRouting) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "olmoe", "q8_0");
  const std::string trace = dir.file("trace.jsonl");
  ASSERT_EQ(test::run_synapse({"run", "-m", model, "--tokens", "1 17 300", "-n", "8", "--temp", "0",
                               "--ignore-eos", "--trace-regions", trace})
                .exit_code,
            0);
  // 2 layers of 4 experts: half of them is 2 per layer, 4 of 8 in all.
  auto out = test::run_synapse({"trace", trace, "--cache-sim", "0.5,100%,3", "--policy", "lru,lfu"});
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_NE(out.out.find("(one per layer), 8 steps"), std::string::npos) << out.out;
  for (const char* row : {"| 0.5      | lru      |           4/8 |", "| 0.5      | lfu      |           4/8 |",
                          "| 0.5      | optimal  |           4/8 |", "| 100%     | optimal  |           8/8 |",
                          "| 3        | lru      |           6/8 |"})
    EXPECT_NE(out.out.find(row), std::string::npos) << row << "\n" << out.out;
  EXPECT_EQ(out.out.find("step position"), std::string::npos) << "the summary is replaced";

  auto global = test::run_synapse({"trace", trace, "--cache-sim", "2", "--cache-scope", "global"});
  ASSERT_EQ(global.exit_code, 0);
  EXPECT_NE(global.out.find("one for all layers"), std::string::npos) << global.out;

  EXPECT_EQ(test::run_synapse({"trace", trace, "--cache-sim", "0.5", "--policy", "mru"}).exit_code, 2);
  EXPECT_EQ(test::run_synapse({"trace", trace, "--cache-sim", "half"}).exit_code, 2);
  EXPECT_EQ(test::run_synapse({"trace", trace, "--cache-sim", "1.5"}).exit_code, 2);
}

TEST(TraceCli, SpeculativeRunTracesItsAcceptanceAndTraceReportsIt) {
  test::TempDir dir;
  const std::string model = test::write_tiny_model(dir, "qwen2", "q8_0");
  const std::string trace = dir.file("trace.jsonl");
  auto run = test::run_synapse({"run", "-m", model, "--tokens", "1 17 300 42 1 17 300", "-n", "12", "--temp", "0",
                                "--ignore-eos", "--lookup-ngram", "2", "--draft-max", "4", "--trace-regions", trace},
                               true);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::ifstream in(trace);
  const exec::SpeculationTotals totals = exec::summarize_trace(in).speculation;
  EXPECT_EQ(totals.committed, 12);
  EXPECT_GT(totals.target_passes, 0);
  EXPECT_LE(totals.accepted, totals.drafted);
  // The same counts as the run's closing line on stderr.
  EXPECT_NE(run.out.find(std::to_string(totals.drafted) + " drafted, " + std::to_string(totals.accepted) + " accepted"),
            std::string::npos)
      << run.out;
  auto out = test::run_synapse({"trace", trace});
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_NE(out.out.find("speculation: " + std::to_string(totals.drafted) + " drafted"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("committed tokens/s"), std::string::npos) << out.out;
}

TEST(TraceSummary, MalformedLineIsAnErrorNamingTheLine) {
  std::istringstream in(
      "{\"step\":0,\"position\":0,\"region\":0,\"kind\":\"Embedding\",\"outcome\":\"Executed\","
      "\"weight_bytes_touched\":10}\nnot json\n");
  try {
    exec::summarize_trace(in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(TraceSummary, StepTokensComeFromTheNextPositionWithoutATokensField) {
  std::istringstream in(
      "{\"step\":0,\"position\":0,\"region\":0,\"kind\":\"Expert\",\"layer\":1,\"expert\":3,"
      "\"outcome\":\"Executed\",\"weight_bytes_touched\":100}\n"
      "{\"step\":0,\"position\":0,\"region\":1,\"kind\":\"Expert\",\"layer\":1,\"expert\":4,"
      "\"outcome\":\"Skipped\",\"weight_bytes_touched\":0}\n"
      "{\"step\":1,\"position\":5,\"region\":1,\"kind\":\"Expert\",\"layer\":1,\"expert\":4,"
      "\"outcome\":\"Executed\",\"weight_bytes_touched\":100}\n");
  const exec::TraceSummary summary = exec::summarize_trace(in);
  ASSERT_EQ(summary.steps.size(), 2u);
  EXPECT_EQ(summary.steps[0].tokens, 5);
  EXPECT_EQ(summary.steps[0].executed, 1u);
  EXPECT_EQ(summary.steps[0].skipped, 1u);
  EXPECT_EQ(summary.steps[1].activity, "?E");
  EXPECT_EQ(summary.expert_histogram.at(1), (std::vector<uint64_t>{0, 0, 0, 1, 1}));
}

}  // namespace
}  // namespace synapse
