// Mixture-of-experts steps through the region scheduler on synthetic tiny
// models: a decode step runs exactly k Expert regions per layer and touches
// exactly the weights of the embedding row, attention, routers (and shared
// experts), those k experts and the logits; the other experts are Skipped
// with zero bytes.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "encoding/encoding.h"
#include "exec/session.h"
#include "model/model.h"
#include "support/tiny_model.h"

namespace synapse::exec {
namespace {

struct StepLog {
  std::vector<RegionEvent> events;
  void listen(Session& session) {
    session.scheduler().set_listener(
        [this](const RegionEvent& event, std::span<const TensorRef>) { events.push_back(event); });
  }
};

uint64_t region_bytes(const ir::Graph& graph, const ir::Region& region) {
  uint64_t bytes = 0;
  for (ir::TensorId w : region.boundary.weights) bytes += graph.weight(w).length;
  return bytes;
}

const ir::WeightDescriptor& weight_named(const ir::Graph& graph, const std::string& name) {
  for (const ir::WeightDescriptor& w : graph.weights)
    if (w.name == name) return w;
  throw std::runtime_error("no weight " + name);
}

class MoeDecode : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeDecode, StepTouchesEmbeddingRowAttentionRoutersKExpertsAndLogits) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, GetParam(), "q8_0"));
  const ir::Graph& graph = model.graph;
  Session session(model);
  const std::vector<int32_t> prompt = {1, 17, 300, 42};
  session.eval(prompt);
  StepLog log;
  log.listen(session);
  const std::vector<int32_t> next = {7};
  session.eval(next);

  uint32_t k = 0, experts = 0;
  for (const ir::Node& node : graph.nodes)
    if (const auto* route = std::get_if<ir::TopKRoute>(&node.op)) k = route->k;
  const ir::WeightDescriptor& embd = weight_named(graph, "token_embd.weight");
  uint64_t expected = row_bytes(embd.encoding, static_cast<uint64_t>(embd.shape[1]));
  uint64_t expert_bytes = 0;
  for (const ir::Region& region : graph.regions) {
    if (region.kind.tag == ir::RegionKindTag::Expert) {
      experts += region.kind.layer == 0;
      expert_bytes = region_bytes(graph, region);  // every expert is the same size
    } else if (region.kind.tag != ir::RegionKindTag::Embedding) {
      expected += region_bytes(graph, region);
    }
  }
  ASSERT_GT(k, 0u);
  ASSERT_LT(k, experts);
  expected += uint64_t{model.info.n_layer} * k * expert_bytes;

  std::map<uint32_t, uint32_t> executed_per_layer;
  uint64_t touched = 0;
  ASSERT_EQ(log.events.size(), graph.regions.size());
  for (const RegionEvent& event : log.events) {
    touched += event.weight_bytes_touched;
    if (std::string(event.kind) != "Expert") {
      EXPECT_EQ(event.outcome, RegionOutcome::Executed) << event.kind;
    } else if (event.outcome == RegionOutcome::Executed) {
      ++executed_per_layer[event.layer];
      EXPECT_EQ(event.weight_bytes_touched, expert_bytes);
    } else {
      EXPECT_EQ(event.outcome, RegionOutcome::Skipped);
      EXPECT_EQ(event.weight_bytes_touched, 0u);
    }
  }
  for (uint32_t layer = 0; layer < model.info.n_layer; ++layer) EXPECT_EQ(executed_per_layer[layer], k) << layer;
  EXPECT_EQ(touched, expected);
}

INSTANTIATE_TEST_SUITE_P(Synth, MoeDecode, ::testing::Values("olmoe", "mixtral", "qwen2moe", "qwen3moe"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace synapse::exec
