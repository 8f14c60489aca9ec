// The imatrix collector: a product's sums are the squares of the input rows
// it multiplied (layer 0's attention products see the normed embeddings),
// products of one input collect the same sums, an expert's tensor gets one
// row of sums and one count per expert with every routed token counted
// once per expert that took it, and output.weight only when asked.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <variant>
#include <vector>

#include "calibrate/imatrix_collector.h"
#include "exec/session.h"
#include "exec/weight_table.h"
#include "kernels/ref/linear.h"
#include "kernels/ref/norm.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "synth/synth.h"

namespace synapse::calibrate {
namespace {

const std::vector<int32_t> kTokens = {1, 5, 9, 2, 7, 3, 11, 4, 8, 6, 10, 12};

std::string synth_tiny(const test::TempDir& dir, const std::string& arch) {
  SynthOptions options;
  options.arch = arch;
  options.seed = 3;
  if (arch == "olmoe") {
    options.n_expert = 4;
    options.n_expert_used = 2;
  }
  const std::string path = dir.file(arch + ".gguf");
  synth_model(options, path);
  return path;
}

quant::Imatrix collect(const Model& model, bool process_output) {
  exec::Session session(model);
  ImatrixCollector collector(model.graph, process_output);
  session.scheduler().set_listener(
      [&collector](const exec::RegionEvent& e, std::span<const exec::TensorRef> v) { collector.observe(e, v); });
  session.eval(kTokens);
  return collector.result({"text.txt"}, 1, static_cast<uint32_t>(kTokens.size()));
}

// Layer 0's attention input: the embeddings, RMS-normed with attn_norm.
std::vector<double> normed_embedding_squares(const Model& model) {
  const exec::WeightTable weights(model);
  const ir::Graph& graph = model.graph;
  std::vector<float> x, y;
  int64_t width = 0;
  for (const ir::Node& node : graph.nodes) {
    if (const auto* e = std::get_if<ir::Embedding>(&node.op)) {
      const ref::EncodedMatrix& table = weights.matrix(e->table);
      width = table.cols;
      x.resize(kTokens.size() * static_cast<size_t>(width));
      ref::embedding(kTokens.data(), static_cast<int64_t>(kTokens.size()), table, x.data());
    }
    const auto* norm = std::get_if<ir::RmsNorm>(&node.op);
    if (norm && graph.weight(norm->weight).name == "blk.0.attn_norm.weight") {
      y.resize(x.size());
      ref::rms_norm(x.data(), static_cast<int64_t>(kTokens.size()), width, weights.vector(norm->weight), norm->eps,
                    y.data(), ref::Accumulation::F32);
    }
  }
  std::vector<double> squares(static_cast<size_t>(width), 0.0);
  for (size_t t = 0; t < kTokens.size(); ++t)
    for (int64_t j = 0; j < width; ++j) squares[j] += static_cast<double>(y[t * width + j]) * y[t * width + j];
  return squares;
}

TEST(ImatrixCollector, DenseProductsSumTheSquaresOfTheirInputRows) {
  const test::TempDir dir;
  const Model model = load_model(synth_tiny(dir, "llama"));
  const quant::Imatrix m = collect(model, false);
  EXPECT_EQ(m.datasets, std::vector<std::string>{"text.txt"});
  const quant::ImatrixEntry& q = m.entries.at("blk.0.attn_q.weight");
  ASSERT_EQ(q.counts, std::vector<float>{static_cast<float>(kTokens.size())});
  const std::vector<double> want = normed_embedding_squares(model);
  ASSERT_EQ(q.in_sum2.size(), want.size());
  for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(q.in_sum2[j], want[j], 1e-4 * want[j] + 1e-6) << j;
  EXPECT_EQ(m.entries.at("blk.0.attn_k.weight").in_sum2, q.in_sum2);
  EXPECT_EQ(m.entries.at("blk.0.attn_v.weight").in_sum2, q.in_sum2);
  EXPECT_EQ(m.entries.at("blk.1.ffn_gate.weight").in_sum2, m.entries.at("blk.1.ffn_up.weight").in_sum2);
  EXPECT_NE(m.entries.at("blk.1.ffn_down.weight").in_sum2.size(), q.in_sum2.size());  // n_ff columns
  EXPECT_EQ(m.entries.count("token_embd.weight"), 0u);  // looked up, not multiplied (the output is tied)
  EXPECT_EQ(collect(model, true).entries.count("token_embd.weight"), 0u);
}

TEST(ImatrixCollector, ExpertsGetARowAndACountEachAndEveryRoutedTokenOnce) {
  const test::TempDir dir;
  const Model model = load_model(synth_tiny(dir, "olmoe"));
  const quant::Imatrix m = collect(model, false);
  const quant::ImatrixEntry& gate = m.entries.at("blk.0.ffn_gate_exps.weight");
  const quant::ImatrixEntry& down = m.entries.at("blk.0.ffn_down_exps.weight");
  const size_t n_expert = 4, used = 2;  // as synthesized
  ASSERT_EQ(gate.counts.size(), n_expert);
  EXPECT_EQ(std::accumulate(gate.counts.begin(), gate.counts.end(), 0.0f), static_cast<float>(kTokens.size() * used));
  EXPECT_EQ(down.counts, gate.counts);
  EXPECT_EQ(gate.in_sum2.size() % n_expert, 0u);
  EXPECT_EQ(m.entries.at("blk.0.ffn_up_exps.weight").in_sum2, gate.in_sum2);
  // An expert that took no token has zero sums; one that did, positive ones.
  const size_t cols = gate.in_sum2.size() / n_expert;
  for (size_t e = 0; e < n_expert; ++e) {
    const double sum = std::accumulate(gate.in_sum2.begin() + e * cols, gate.in_sum2.begin() + (e + 1) * cols, 0.0);
    EXPECT_EQ(sum > 0, gate.counts[e] > 0) << e;
  }
  // The (untied) output head only when asked, over every token.
  EXPECT_EQ(m.entries.count("output.weight"), 0u);
  EXPECT_EQ(collect(model, true).entries.at("output.weight").counts,
            std::vector<float>{static_cast<float>(kTokens.size())});
  // The router sees every token.
  EXPECT_EQ(m.entries.at("blk.0.ffn_gate_inp.weight").counts, std::vector<float>{static_cast<float>(kTokens.size())});
}

}  // namespace
}  // namespace synapse::calibrate
