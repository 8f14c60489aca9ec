// Hyperparameters and ModelInfo from GGUF metadata: llama.cpp's key names,
// its defaults for optional keys, and rope scaling.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

#include "model/gguf_import.h"
#include "model/model_test_files.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse {
namespace {

// The required keys of a small qwen3-like model.
GgufMetadata qwen3_metadata() {
  GgufMetadata md;
  md.set("qwen3.embedding_length", uint32_t{256});
  md.set("qwen3.block_count", uint32_t{2});
  md.set("qwen3.attention.head_count", uint32_t{4});
  md.set("qwen3.feed_forward_length", uint32_t{512});
  md.set("qwen3.context_length", uint32_t{40960});
  md.set("qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
  md.set("qwen3.vocab_size", uint32_t{1000});
  return md;
}

TEST(ModelHparams, OptionalKeysTakeLlamaCppDefaults) {
  const DenseHparams hp = read_dense_hparams(qwen3_metadata(), "qwen3", {});
  EXPECT_EQ(hp.n_head_kv, 4u);    // no GQA
  EXPECT_EQ(hp.head_dim, 64u);    // n_embd / n_head
  EXPECT_EQ(hp.rotary_dim, 64u);  // the whole head
  EXPECT_EQ(hp.rope_theta, 10000.0f);
  EXPECT_TRUE(std::holds_alternative<ir::RopeNoScaling>(hp.rope_scaling));
  EXPECT_EQ(hp.n_vocab, 1000u);
  EXPECT_EQ(hp.n_ctx_train, 40960u);
}

TEST(ModelHparams, KeyLengthMayDifferFromEmbeddingPerHead) {
  GgufMetadata md = qwen3_metadata();
  md.set("qwen3.attention.key_length", uint32_t{128});
  md.set("qwen3.attention.value_length", uint32_t{128});
  md.set("qwen3.attention.head_count_kv", uint32_t{2});
  md.set("qwen3.rope.freq_base", 1e6f);
  const DenseHparams hp = read_dense_hparams(md, "qwen3", {});
  EXPECT_EQ(hp.head_dim, 128u);
  EXPECT_EQ(hp.rotary_dim, 128u);
  EXPECT_EQ(hp.n_head_kv, 2u);
  EXPECT_EQ(hp.rope_theta, 1e6f);
}

TEST(ModelHparams, VocabularyFromEmbeddingRowsWithoutVocabSize) {
  GgufMetadata md = qwen3_metadata();
  md.erase("qwen3.vocab_size");
  TensorTable tensors;
  tensors.add(ir::WeightDescriptor{"token_embd.weight", 0, 0, 4 * 777 * 256, Encoding::F32, {777, 256}});
  EXPECT_EQ(read_dense_hparams(md, "qwen3", tensors).n_vocab, 777u);
  try {
    read_dense_hparams(md, "qwen3", {});
    FAIL() << "no vocabulary size anywhere";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
    EXPECT_EQ(e.subject(), "token_embd.weight");
  }
}

ir::RopeScaling rope_scaling_of(const std::function<void(GgufMetadata&)>& keys) {
  GgufMetadata md = qwen3_metadata();
  keys(md);
  return read_dense_hparams(md, "qwen3", {}).rope_scaling;
}

// The error the metadata gives, or none.
std::optional<Error> error_of(const std::function<void(GgufMetadata&)>& keys) {
  try {
    rope_scaling_of(keys);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

float linear_factor(const ir::RopeScaling& scaling) {
  const auto* linear = std::get_if<ir::RopeLinearScaling>(&scaling);
  return linear ? linear->factor : 0.0f;
}

// llama.cpp reads a missing rope.scaling.type as "linear", the factor from
// rope.scaling.factor or else the older rope.scale_linear, and 0 as no
// factor; "none" ignores the factor.
TEST(ModelHparams, RopeScalingLinearAndNone) {
  EXPECT_EQ(linear_factor(rope_scaling_of([](GgufMetadata& md) {
              md.set("qwen3.rope.scaling.type", "linear");
              md.set("qwen3.rope.scaling.factor", 4.0f);
            })),
            4.0f);
  EXPECT_EQ(linear_factor(rope_scaling_of([](GgufMetadata& md) { md.set("qwen3.rope.scaling.factor", 4.0f); })),
            4.0f);
  EXPECT_EQ(linear_factor(rope_scaling_of([](GgufMetadata& md) { md.set("qwen3.rope.scale_linear", 2.0f); })),
            2.0f);
  EXPECT_EQ(linear_factor(rope_scaling_of([](GgufMetadata& md) {
              md.set("qwen3.rope.scaling.factor", 4.0f);
              md.set("qwen3.rope.scale_linear", 2.0f);
            })),
            4.0f);
  const std::function<void(GgufMetadata&)> unscaled[] = {
      [](GgufMetadata& md) { md.set("qwen3.rope.scaling.factor", 0.0f); },
      [](GgufMetadata& md) { md.set("qwen3.rope.scaling.factor", 1.0f); },
      [](GgufMetadata& md) { md.set("qwen3.rope.scaling.type", "linear"); },
      [](GgufMetadata& md) {
        md.set("qwen3.rope.scaling.type", "none");
        md.set("qwen3.rope.scaling.factor", 4.0f);
      },
  };
  for (const auto& keys : unscaled) EXPECT_TRUE(std::holds_alternative<ir::RopeNoScaling>(rope_scaling_of(keys)));
}

ir::RopeYarnScaling yarn_of(const std::function<void(GgufMetadata&)>& keys) {
  const ir::RopeScaling scaling = rope_scaling_of([&](GgufMetadata& md) {
    md.set("qwen3.rope.scaling.type", "yarn");
    keys(md);
  });
  const auto* yarn = std::get_if<ir::RopeYarnScaling>(&scaling);
  if (!yarn) ADD_FAILURE() << "not YaRN";
  return yarn ? *yarn : ir::RopeYarnScaling{};
}

// YaRN takes llama.cpp's defaults: ext_factor 1, beta_fast 32, beta_slow 1,
// the training context as the original one, and an attn_factor that
// cancels ggml's own 1 + 0.1 ln(factor) (llama.cpp wants that magnitude
// once), times rope.scaling.attn_factor.
TEST(ModelHparams, RopeScalingYarnTakesLlamaCppsDefaults) {
  const ir::RopeYarnScaling yarn = yarn_of([](GgufMetadata& md) {
    md.set("qwen3.rope.scaling.factor", 4.0f);
    md.set("qwen3.rope.scaling.original_context_length", uint32_t{64});
  });
  EXPECT_EQ(yarn.factor, 4.0f);
  EXPECT_EQ(yarn.original_context, 64u);
  EXPECT_EQ(yarn.ext_factor, 1.0f);
  EXPECT_FLOAT_EQ(yarn.attn_factor, 1.0f);
  EXPECT_EQ(yarn.beta_fast, 32.0f);
  EXPECT_EQ(yarn.beta_slow, 1.0f);

  EXPECT_EQ(yarn_of([](GgufMetadata& md) { md.set("qwen3.rope.scaling.factor", 4.0f); }).original_context, 40960u);
  EXPECT_EQ(yarn_of([](GgufMetadata& md) {
              md.set("qwen3.rope.scaling.original_context_length", uint32_t{0});
            }).original_context,
            40960u);
  EXPECT_EQ(yarn_of([](GgufMetadata& md) { md.set("qwen3.rope.scale_linear", 8.0f); }).factor, 8.0f);
  EXPECT_EQ(yarn_of([](GgufMetadata&) {}).factor, 1.0f);
  EXPECT_FLOAT_EQ(yarn_of([](GgufMetadata& md) {
                    md.set("qwen3.rope.scaling.factor", 4.0f);
                    md.set("qwen3.rope.scaling.attn_factor", 1.5f);
                  }).attn_factor,
                  1.5f);
  // Up to a factor of 1, llama.cpp's magnitude is 1: attn_factor undoes
  // ggml's 1 + 0.1 ln(factor) < 1.
  EXPECT_FLOAT_EQ(yarn_of([](GgufMetadata& md) { md.set("qwen3.rope.scaling.factor", 0.5f); }).attn_factor,
                  1.0f / (1.0f + 0.1f * std::log(0.5f)));
}

TEST(ModelHparams, RopeScalingWeDoNotBuildIsUnsupportedNamingTheKey) {
  for (const char* type : {"longrope", "dynamic", ""}) {
    const std::optional<Error> e = error_of([&](GgufMetadata& md) { md.set("qwen3.rope.scaling.type", type); });
    ASSERT_TRUE(e) << type;
    EXPECT_EQ(e->kind(), ErrorKind::Unsupported) << type;
    EXPECT_EQ(e->subject(), "qwen3.rope.scaling.type");
    EXPECT_NE(std::string(e->what()).find("'" + std::string(type) + "'"), std::string::npos) << e->what();
  }
  // llama.cpp scales every type's rotation by it; only YaRN's attributes can.
  const std::optional<Error> e = error_of([](GgufMetadata& md) {
    md.set("qwen3.rope.scaling.type", "linear");
    md.set("qwen3.rope.scaling.factor", 4.0f);
    md.set("qwen3.rope.scaling.attn_factor", 2.0f);
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::Unsupported);
  EXPECT_EQ(e->subject(), "qwen3.rope.scaling.attn_factor");
}

TEST(ModelHparams, NegativeRopeScalingValuesAreInvalid) {
  for (const char* key : {"rope.scaling.factor", "rope.scale_linear", "rope.scaling.attn_factor"}) {
    const std::optional<Error> e = error_of([&](GgufMetadata& md) {
      md.set("qwen3.rope.scaling.type", "yarn");
      md.set(std::string("qwen3.") + key, -2.0f);
    });
    ASSERT_TRUE(e) << key;
    EXPECT_EQ(e->kind(), ErrorKind::InvalidValue) << key;
    EXPECT_EQ(e->subject(), std::string("qwen3.") + key);
  }
}

TEST(ModelHparams, OutOfRangeValuesAreInvalid) {
  GgufMetadata md = qwen3_metadata();
  md.set("qwen3.attention.head_count_kv", uint32_t{3});  // does not divide 4 heads
  try {
    read_dense_hparams(md, "qwen3", {});
    FAIL() << "3 kv heads for 4 heads accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_EQ(e.subject(), "qwen3.attention.head_count_kv");
  }
}

// A Llama 3.2-shaped file (cut down) carries rope_freqs.weight: Llama 3 rope
// scaling reads its factors.
TEST(ModelHparams, Llama3RopeFreqsBecomeRopeScaling) {
  test::TempDir dir;
  const std::string path = dir.file("llama3.gguf");
  SynthOptions options;
  options.preset = "llama-3.2-1b";
  options.n_layer = 1;
  options.n_embd = 64;
  options.n_head = 4;
  options.n_head_kv = 2;
  options.n_ff = 128;
  options.n_vocab = 512;  // the llama3 tokenizer needs 261 tokens at least
  synth_model(options, path);
  const Model model = load_model(path, {.max_ctx = 256});
  size_t ropes = 0;
  for (const ir::Node& n : model.graph.nodes) {
    const auto* rope = std::get_if<ir::Rope>(&n.op);
    if (!rope) continue;
    ++ropes;
    const auto* llama3 = std::get_if<ir::RopeLlama3Scaling>(&rope->scaling);
    ASSERT_NE(llama3, nullptr);
    EXPECT_EQ(model.graph.weight(llama3->freq_factors).name, "rope_freqs.weight");
  }
  EXPECT_EQ(ropes, 2u);  // q and k of the one layer
  EXPECT_EQ(model.graph.bounds.at("max_ctx"), 256);
}

// tokenizer.ggml.add_bos_token absent: llama.cpp's default for the tokenizer.
bool add_bos_without_key(const std::function<void(GgufMetadata&)>& tokenizer) {
  test::TempDir dir;
  const std::string path = dir.file("tok.gguf");
  test::rewrite_gguf(test::shared_data(test::kStoriesGguf), path, {.metadata = [&](GgufMetadata& md) {
                       md.erase("tokenizer.ggml.add_bos_token");
                       tokenizer(md);
                     }});
  return load_model(path).info.add_bos;
}

TEST(ModelHparams, AddBosDefaultsFollowTheTokenizer) {
  SYNAPSE_SKIP_UNLESS_SHARED(test::kStoriesGguf);
  EXPECT_TRUE(add_bos_without_key([](GgufMetadata&) {}));  // SentencePiece
  EXPECT_FALSE(add_bos_without_key([](GgufMetadata& md) {
    md.set("tokenizer.ggml.model", "gpt2");
    md.set("tokenizer.ggml.pre", "qwen2");
  }));
  EXPECT_TRUE(add_bos_without_key([](GgufMetadata& md) {
    md.set("tokenizer.ggml.model", "gpt2");
    md.set("tokenizer.ggml.pre", "llama-bpe");
  }));
}

}  // namespace
}  // namespace synapse
