// bench_runner: llama-bench's tests and statistics on a tiny synthetic model.
// Only counts and signs are checked, never timings.
#include "generate/bench_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "format/gguf_reader.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"

namespace synapse {
namespace {

// A tiny llama model with room for the tests below.
class BenchRunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    path_ = test::write_tiny_model(*dir_);
    model_ = new Model(load_model(path_, LoadOptions{.max_ctx = 16, .chunk = 512}));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
  }
  static test::TempDir* dir_;
  static std::string path_;
  static Model* model_;
};
test::TempDir* BenchRunnerTest::dir_ = nullptr;
std::string BenchRunnerTest::path_;
Model* BenchRunnerTest::model_ = nullptr;

TEST(BenchRunner, TestsArePromptsThenGenerationsSkippingZeros) {
  const auto tests = bench_tests({8, 0, 16}, {0, 4});
  ASSERT_EQ(tests.size(), 3u);
  EXPECT_EQ(tests[0].name(), "pp8");
  EXPECT_EQ(tests[1].name(), "pp16");
  EXPECT_EQ(tests[2].name(), "tg4");
  EXPECT_EQ(tests[2].n_prompt, 0u);
  EXPECT_EQ(tests[2].n_gen, 4u);
  EXPECT_TRUE(bench_tests({0}, {0}).empty());
}

TEST(BenchRunner, TokensAreFixedAndInsideTheVocabulary) {
  const auto a = bench_tokens(100, 37);
  EXPECT_EQ(a, bench_tokens(100, 37));
  for (int32_t t : a) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 37);
  }
}

TEST(BenchRunner, StatisticsFollowLlamaBench) {
  BenchResult r;
  r.test = {.n_prompt = 10};
  r.samples_ns = {1'000'000'000, 2'000'000'000};  // 10 t/s and 5 t/s
  EXPECT_DOUBLE_EQ(r.avg_ns(), 1.5e9);
  EXPECT_NEAR(r.stddev_ns(), std::sqrt(0.5) * 1e9, 1.0);  // sample stddev (n - 1)
  EXPECT_EQ(r.samples_ts(), (std::vector<double>{10.0, 5.0}));
  EXPECT_DOUBLE_EQ(r.avg_ts(), 7.5);
  r.samples_ns.resize(1);
  EXPECT_EQ(r.stddev_ts(), 0.0);
}

TEST_F(BenchRunnerTest, PromptAndGenerationGivePositiveThroughput) {
  exec::Session session(*model_);
  for (const BenchTest& test : bench_tests({8}, {4})) {
    const BenchResult r = run_bench_test(session, test, 2);
    EXPECT_EQ(r.samples_ns.size(), 2u) << test.name();
    for (double ts : r.samples_ts()) EXPECT_GT(ts, 0.0) << test.name();
    EXPECT_GT(r.avg_ts(), 0.0);
    EXPECT_EQ(session.position(), 0) << "the session is reset after a test";
  }
}

TEST_F(BenchRunnerTest, NoWarmupRunsOnlyTheTimedRepetitions) {
  exec::Session session(*model_);
  int64_t tokens_embedded = 0;
  session.scheduler().set_listener([&](const exec::RegionEvent& e, std::span<const exec::TensorRef>) {
    if (std::string_view(e.kind) == "Embedding") tokens_embedded += e.tokens;
  });
  run_bench_test(session, {.n_prompt = 8}, 2, /*warmup=*/false);
  EXPECT_EQ(tokens_embedded, 2 * 8);
  tokens_embedded = 0;
  run_bench_test(session, {.n_prompt = 8}, 2, /*warmup=*/true);
  EXPECT_EQ(tokens_embedded, 3 * 8);
  tokens_embedded = 0;
  run_bench_test(session, {.n_gen = 4, .n_depth = 4}, 1, /*warmup=*/false);
  EXPECT_EQ(tokens_embedded, 4 + 4) << "the depth, then the generated tokens";
  session.scheduler().set_listener(nullptr);
}

TEST_F(BenchRunnerTest, ATestLongerThanTheContextThrows) {
  exec::Session session(*model_);
  EXPECT_THROW(run_bench_test(session, {.n_prompt = 17}, 1), Error);
}

TEST_F(BenchRunnerTest, ModelDescriptionAndJsonHaveLlamaBenchFields) {
  exec::Session session(*model_);
  const BenchModel m = describe_model(*model_, path_, session);
  EXPECT_GT(m.size, 0u);
  EXPECT_GT(m.n_params, 0u);
  EXPECT_EQ(m.type.rfind("llama ", 0), 0u) << m.type;
  EXPECT_NE(m.type.find("Q8_0"), std::string::npos) << m.type;
  // A dense decode step reads every weight; tiny's tied token_embd twice:
  // one row as the embedding, the whole table as the logits.
  for (const ir::WeightDescriptor& w : model_->graph.weights) {
    if (w.name == "token_embd.weight") {
      EXPECT_EQ(m.decode_bytes, m.size + w.length / static_cast<uint64_t>(w.shape.at(0)));
    }
  }

  BenchResult r;
  r.test = {.n_gen = 4};
  r.samples_ns = {4'000'000, 8'000'000};
  const nlohmann::json j = bench_json(m, 2, r);
  for (const char* key : {"model_filename", "model_type", "model_size", "model_n_params", "n_threads", "n_prompt",
                          "n_gen", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ts", "decode_weight_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["n_gen"], 4);
  EXPECT_EQ(j["n_prompt"], 0);
  EXPECT_EQ(j["n_threads"], 2);
  EXPECT_EQ(j["avg_ns"], 6'000'000);
  EXPECT_EQ(j["samples_ts"].size(), 2u);
  EXPECT_EQ(j["decode_weight_bytes"], m.decode_bytes);
  ASSERT_TRUE(j.contains("weights_in_2m_pages"));
  EXPECT_GE(j["weights_in_2m_pages"].get<double>(), 0.0);
  EXPECT_LE(j["weights_in_2m_pages"].get<double>(), 1.0);

  const std::string table = bench_markdown(m, 2, {r});
  EXPECT_NE(table.find("| model"), std::string::npos) << table;
  EXPECT_NE(table.find("tg4"), std::string::npos) << table;
  EXPECT_NE(table.find("750.00 ± 353.55"), std::string::npos) << table;
}

// The figure bench reports (and bench/compare divides bandwidth by) is what
// a decode step reads: for a mixture of experts, k experts per layer, not
// all of them. Expected bytes come from the file's tensor table: token_embd
// one row (olmoe does not tie it to the logits), each merged expert tensor
// k / n_expert of it, everything else (attention, norms, routers, logits) whole.
TEST(BenchRunner, MoeDecodeBytesCountKExpertsPerLayer) {
  test::TempDir dir;
  const std::string path = test::write_tiny_model(dir, "olmoe", "q8_0");
  const GgufFile file = GgufFile::open(path);
  const auto k = static_cast<uint64_t>(file.metadata().get_int("olmoe.expert_used_count"));
  const auto n_expert = static_cast<uint64_t>(file.metadata().get_int("olmoe.expert_count"));
  ASSERT_LT(k, n_expert);
  uint64_t expected = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (t.name == "token_embd.weight") {
      expected += t.n_bytes / t.dims[1];
    } else if (t.name.ends_with("_exps.weight")) {
      expected += t.n_bytes / n_expert * k;
    } else {
      expected += t.n_bytes;
    }
  }
  const Model model = load_model(path, LoadOptions{.max_ctx = 16});
  exec::Session session(model);
  const BenchModel m = describe_model(model, path, session);
  EXPECT_EQ(m.decode_bytes, expected);
  EXPECT_EQ(session.position(), 0) << "the session is reset after measuring";
}

}  // namespace
}  // namespace synapse
