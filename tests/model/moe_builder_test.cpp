// Mixture-of-experts graphs from GGUF metadata: the regions of a layer, the
// routing attributes per family, expert weights as views into the merged
// expert tensors (no copies), and the metadata errors.
#include <gtest/gtest.h>

#include "format/gguf_reader.h"
#include "model/gguf_import.h"
#include "support/tiny_model.h"
#include "synapse/error.h"

namespace synapse {
namespace {

struct LayerRegions {
  int attention = 0, router = 0, experts = 0, mlp = 0, merge = 0;
};

LayerRegions regions_of_layer(const ir::Graph& graph, uint32_t layer) {
  LayerRegions r;
  for (const ir::Region& region : graph.regions) {
    if (region.kind.layer != layer) continue;
    switch (region.kind.tag) {
      case ir::RegionKindTag::Attention: ++r.attention; break;
      case ir::RegionKindTag::Router: ++r.router; break;
      case ir::RegionKindTag::Expert: ++r.experts; break;
      case ir::RegionKindTag::Mlp: ++r.mlp; break;
      case ir::RegionKindTag::Merge: ++r.merge; break;
      default: break;
    }
  }
  return r;
}

const ir::TopKRoute& the_route(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes)
    if (const auto* route = std::get_if<ir::TopKRoute>(&node.op)) return *route;
  throw std::runtime_error("no TopKRoute");
}

struct FamilyCase {
  const char* arch;
  bool normalize_top_k;
  int shared_expert_regions;
};

class MoeBuilder : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(MoeBuilder, LayerHasAttentionRouterRoutedExpertsAndMerge) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, GetParam().arch, "q8_0"));
  const ir::Graph& graph = model.graph;
  const ir::TopKRoute& route = the_route(graph);
  EXPECT_EQ(route.k, 2u);  // the tiny preset: top-2 of 4
  EXPECT_EQ(route.normalize_top_k, GetParam().normalize_top_k);
  EXPECT_EQ(route.tie_policy, ir::TiePolicy::LowestIndex);
  EXPECT_TRUE(ir::is_causal(route));
  for (uint32_t layer = 0; layer < model.info.n_layer; ++layer) {
    const LayerRegions r = regions_of_layer(graph, layer);
    EXPECT_EQ(r.attention, 1);
    EXPECT_EQ(r.router, 1);
    EXPECT_EQ(r.experts, 4);
    EXPECT_EQ(r.mlp, GetParam().shared_expert_regions);
    EXPECT_EQ(r.merge, 1);
  }
  for (const ir::Region& region : graph.regions) {
    if (region.kind.tag != ir::RegionKindTag::Expert) continue;
    const auto* slot = std::get_if<ir::RouteSlot>(&region.activation.decision);
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(slot->slot, region.kind.expert);
    EXPECT_EQ(region.activation.provenance, ir::Provenance::ModelRouted);
    EXPECT_TRUE(std::holds_alternative<ir::OutputsAbsent>(region.activation.skip));
  }
}

// OLMoE and Qwen2-MoE keep the softmax weights of the top k; Mixtral and
// Qwen3-MoE renormalise them (llama.cpp's norm_w).
INSTANTIATE_TEST_SUITE_P(Synth, MoeBuilder,
                         ::testing::Values(FamilyCase{"olmoe", false, 0}, FamilyCase{"mixtral", true, 0},
                                           FamilyCase{"qwen2moe", false, 1}, FamilyCase{"qwen3moe", true, 0}),
                         [](const auto& info) { return std::string(info.param.arch); });

TEST(MoeWeights, ExpertWeightsAreSlicesOfTheMergedTensorInTheMappedFile) {
  test::TempDir dir;
  const std::string path = test::write_tiny_model(dir, "olmoe", "q8_0");
  const Model model = load_model(path);
  const TensorTable file_tensors = gguf_tensor_table(GgufFile::open(path));
  const ir::WeightDescriptor& merged = *file_tensors.find("blk.1.ffn_down_exps.weight");
  const uint64_t slice = merged.length / 4;
  int found = 0;
  for (const ir::WeightDescriptor& w : model.graph.weights) {
    for (uint32_t e = 0; e < 4; ++e) {
      if (w.name != "blk.1.ffn_down_exps.weight[" + std::to_string(e) + "]") continue;
      ++found;
      EXPECT_EQ(w.offset, merged.offset + e * slice);
      EXPECT_EQ(w.length, slice);
      EXPECT_EQ(w.shape, (std::vector<int64_t>{merged.shape[1], merged.shape[2]}));
      // The same mapped bytes, not a copy.
      EXPECT_EQ(model.weight_bytes(ir::TensorId{static_cast<uint32_t>(&w - model.graph.weights.data())}).data(),
                model.files[0]->bytes().data() + merged.offset + e * slice);
    }
  }
  EXPECT_EQ(found, 4);
  EXPECT_EQ(file_tensors.find("blk.1.ffn_down_exps.weight[0]"), nullptr);
}

TEST(MoeWeights, TensorThatDoesNotSplitIntoExpertsIsRejected) {
  ir::WeightDescriptor flat{"blk.0.ffn_up_exps.weight", 0, 0, 100, Encoding::F32, {8, 16}};
  EXPECT_THROW(expert_view(flat, 0), Error);
  ir::WeightDescriptor uneven{"blk.0.ffn_up_exps.weight", 0, 0, 100, Encoding::F32, {3, 4, 4}};
  EXPECT_THROW(expert_view(uneven, 0), Error);
  ir::WeightDescriptor fine{"blk.0.ffn_up_exps.weight", 0, 0, 96, Encoding::F32, {3, 4, 4}};
  EXPECT_THROW(expert_view(fine, 3), Error);
  EXPECT_EQ(expert_view(fine, 2).offset, 64u);
}

GgufMetadata olmoe_metadata() {
  GgufMetadata md;
  md.set("olmoe.embedding_length", uint32_t{256});
  md.set("olmoe.block_count", uint32_t{2});
  md.set("olmoe.attention.head_count", uint32_t{4});
  md.set("olmoe.feed_forward_length", uint32_t{512});
  md.set("olmoe.context_length", uint32_t{4096});
  md.set("olmoe.attention.layer_norm_rms_epsilon", 1e-5f);
  md.set("olmoe.vocab_size", uint32_t{1000});
  md.set("olmoe.expert_count", uint32_t{64});
  md.set("olmoe.expert_used_count", uint32_t{8});
  return md;
}

TEST(MoeHparams, ExpertWidthsDefaultToFeedForwardLength) {
  const GgufMetadata md = olmoe_metadata();
  const MoeHparams moe = read_moe_hparams(md, "olmoe", read_dense_hparams(md, "olmoe", {}));
  EXPECT_EQ(moe.n_expert, 64u);
  EXPECT_EQ(moe.n_expert_used, 8u);
  EXPECT_EQ(moe.n_ff_expert, 512u);
  EXPECT_EQ(moe.n_ff_shared, 512u);
}

TEST(MoeHparams, MoreExpertsUsedThanExistIsInvalid) {
  GgufMetadata md = olmoe_metadata();
  md.set("olmoe.expert_used_count", uint32_t{65});
  try {
    read_moe_hparams(md, "olmoe", read_dense_hparams(md, "olmoe", {}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_EQ(e.subject(), "olmoe.expert_used_count");
  }
}

TEST(MoeHparams, MoeArchitectureWithoutExpertCountIsMissingKey) {
  GgufMetadata md = olmoe_metadata();
  md.erase("olmoe.expert_count");
  EXPECT_TRUE(has_experts(md, "olmoe", find_family("olmoe")));
  EXPECT_FALSE(has_experts(md, "llama", find_family("llama")));
  try {
    read_moe_hparams(md, "olmoe", read_dense_hparams(md, "olmoe", {}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
  }
}

}  // namespace
}  // namespace synapse
