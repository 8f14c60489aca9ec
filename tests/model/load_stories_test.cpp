// stories260K as a llama2.c checkpoint and as its GGUF twin: both load into
// the same verified graph, with weights read in place.
#include <gtest/gtest.h>

#include <set>

#include "ir/fingerprint.h"
#include "ir/verify.h"
#include "model/model.h"
#include "model/model_test_files.h"

namespace synapse {
namespace {

using test::shared_data;

const ir::WeightDescriptor& weight_named(const Model& model, const std::string& name) {
  for (const ir::WeightDescriptor& w : model.graph.weights)
    if (w.name == name) return w;
  throw std::runtime_error("no weight " + name);
}

void expect_stories_shape(const Model& model) {
  EXPECT_EQ(model.info.architecture, "llama");
  EXPECT_EQ(model.info.n_vocab, 512u);
  EXPECT_EQ(model.info.n_embd, 64u);
  EXPECT_EQ(model.info.n_layer, 5u);
  EXPECT_EQ(model.info.n_ctx_train, 512u);
  EXPECT_EQ(model.info.bos_token, 1);
  EXPECT_EQ(model.info.eos_token, 2);
  EXPECT_TRUE(model.info.add_bos);
  EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(5));
  EXPECT_NO_THROW(ir::verify(model.graph));
  EXPECT_EQ(model.graph.bounds.at("chunk"), 512);
  EXPECT_EQ(model.graph.bounds.at("max_ctx"), 512);  // the training context, under the 4096 cap
  EXPECT_EQ(model.graph.slots.size(), 10u);          // K and V per layer
  // Tied classifier: the logits read the embedding table.
  const auto& logits = std::get<ir::Logits>(model.graph.nodes[model.graph.regions.back().members.back().index].op);
  EXPECT_EQ(model.graph.weight(logits.weight).name, "token_embd.weight");
  EXPECT_EQ(weight_named(model, "blk.4.attn_k.weight").shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(weight_named(model, "blk.4.ffn_down.weight").shape, (std::vector<int64_t>{64, 172}));
}

// The weight's bytes lie inside the file mapping: read in place, not copied.
void expect_in_place(const Model& model, const std::string& name) {
  const auto file = model.files.at(0)->bytes();
  const auto& w = weight_named(model, name);
  std::vector<ir::TensorId> ids;
  for (uint32_t i = 0; i < model.graph.weights.size(); ++i)
    if (model.graph.weights[i].name == name) ids.push_back(ir::TensorId{i});
  ASSERT_EQ(ids.size(), 1u);
  const auto bytes = model.weight_bytes(ids[0]);
  EXPECT_EQ(bytes.data(), file.data() + w.offset);
  EXPECT_EQ(bytes.size(), w.length);
}

TEST(ModelStories, Llama2cCheckpointLoads) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesBin);
  const Model model = load_model(shared_data(test::kStoriesBin));
  expect_stories_shape(model);
  EXPECT_EQ(model.info.name, "stories260K.bin");
  expect_in_place(model, "blk.2.ffn_up.weight");
  // The last tensor ends where the legacy RoPE tables begin (tied: no wcls).
  const uint64_t rope_tables = 2 * 512 * (8 / 2) * sizeof(float);
  const auto& norm = weight_named(model, "output_norm.weight");
  EXPECT_EQ(norm.offset + norm.length + rope_tables, model.files[0]->bytes().size());
}

TEST(ModelStories, GgufTwinLoads) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Model model = load_model(shared_data(test::kStoriesGguf));
  expect_stories_shape(model);
  EXPECT_EQ(model.info.name, "stories260K");
  expect_in_place(model, "blk.2.ffn_up.weight");
}

// Same architecture, shapes, encodings (F32), eps, theta, rope layout and
// tied classifier, so the same graph: only where the bytes are differs, and
// the fingerprint leaves that out.
TEST(ModelStories, CheckpointAndGgufHaveOneFingerprint) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesBin);
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Model bin = load_model(shared_data(test::kStoriesBin));
  const Model gguf = load_model(shared_data(test::kStoriesGguf));
  EXPECT_EQ(ir::fingerprint_hex(bin.graph), ir::fingerprint_hex(gguf.graph));
  // And the same numbers: the converter copied the embedding and FFN as is.
  for (const char* name : {"token_embd.weight", "blk.3.ffn_gate.weight", "output_norm.weight"}) {
    const auto& a = weight_named(bin, name);
    const auto& b = weight_named(gguf, name);
    ASSERT_EQ(a.length, b.length) << name;
    EXPECT_EQ(0, std::memcmp(bin.files[0]->bytes().data() + a.offset, gguf.files[0]->bytes().data() + b.offset,
                             a.length))
        << name;
  }
}

TEST(ModelStories, ContextSizeDoesNotChangeTheFingerprint) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  const Model small = load_model(shared_data(test::kStoriesGguf), {.max_ctx = 64, .chunk = 16});
  const Model large = load_model(shared_data(test::kStoriesGguf), {.max_ctx = 2048, .chunk = 512});
  EXPECT_EQ(small.graph.bounds.at("max_ctx"), 64);
  EXPECT_EQ(small.graph.bounds.at("chunk"), 16);
  EXPECT_EQ(large.graph.bounds.at("max_ctx"), 2048);
  EXPECT_EQ(ir::fingerprint_hex(small.graph), ir::fingerprint_hex(large.graph));
}

// The quantized twins are the same model in other encodings: one region
// list, and fingerprints that differ, since a weight's encoding is part of it.
TEST(ModelStories, EncodedTwinsLoadWithTheirOwnFingerprints) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  std::set<std::string> fingerprints;
  for (const char* type : {"f32", "f16", "q8_0", "q5_0", "q4_0"}) {
    const std::string path = "gguf/stories260K-" + std::string(type) + ".gguf";
    SYNAPSE_SKIP_UNLESS_SHARED(path);
    const Model model = load_model(shared_data(path));
    EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(5)) << type;
    fingerprints.insert(ir::fingerprint_hex(model.graph));
  }
  EXPECT_EQ(fingerprints.size(), 5u);
}

TEST(ModelStories, LlamaTwoTinyRandomLoads) {
  const std::string path = "gguf/llama-2-tiny-random.gguf";
  SYNAPSE_SKIP_UNLESS_SHARED(path);
  const Model model = load_model(shared_data(path));
  EXPECT_EQ(model.info.n_vocab, 32000u);
  EXPECT_EQ(model.graph.bounds.at("max_ctx"), 4096);
  EXPECT_EQ(test::region_list(model.graph), test::dense_region_list(model.info.n_layer));
}

}  // namespace
}  // namespace synapse
