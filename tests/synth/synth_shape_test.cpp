// synth's building blocks: preset shapes (the full qwen3-30b-a3b without
// writing it), their mapping onto other architectures, llama3 rope factors,
// and the tokenizer at real sizes.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>

#include "synapse/error.h"
#include "synth/synth_arch.h"
#include "synth/synth_vocab.h"
#include "synth/synth_weights.h"

namespace synapse::synth {
namespace {

SynthShape shape(const std::string& preset, const std::string& arch = "") {
  SynthOptions o;
  o.preset = preset;
  o.arch = arch;
  return resolve_shape(o, resolve_arch(o));
}

TEST(SynthPresets, MatchTheRealModelsConfigs) {
  const SynthShape smol = shape("smollm2-135m");
  EXPECT_EQ(
      std::tie(smol.n_layer, smol.n_embd, smol.n_head, smol.n_head_kv, smol.n_ff, smol.n_vocab),
      std::make_tuple(30u, 576u, 9u, 3u, 1536u, 49152u));
  EXPECT_EQ(smol.rope_theta, 100000.f);
  EXPECT_TRUE(smol.tied);
  EXPECT_EQ(smol.vocab_family, "smollm");

  const SynthShape qwen = shape("qwen2.5-0.5b");
  EXPECT_EQ(
      std::tie(qwen.n_layer, qwen.n_embd, qwen.n_head, qwen.n_head_kv, qwen.n_ff, qwen.n_vocab),
      std::make_tuple(24u, 896u, 14u, 2u, 4864u, 151936u));
  EXPECT_EQ(qwen.rms_eps, 1e-6f);
  EXPECT_EQ(qwen.n_ctx, 32768u);

  const SynthShape llama = shape("llama-3.2-1b");
  EXPECT_EQ(std::tie(llama.n_layer, llama.n_embd, llama.n_head, llama.n_head_kv, llama.n_ff),
            std::make_tuple(16u, 2048u, 32u, 8u, 8192u));
  EXPECT_TRUE(llama.llama3_rope);
  EXPECT_EQ(llama.vocab_family, "llama3");

  const SynthShape olmoe = shape("olmoe-1b-7b");
  EXPECT_EQ(std::tie(olmoe.n_layer, olmoe.n_embd, olmoe.n_head, olmoe.n_head_kv, olmoe.head_dim),
            std::make_tuple(16u, 2048u, 16u, 16u, 128u));
  EXPECT_EQ(std::tie(olmoe.n_ff, olmoe.n_expert, olmoe.n_expert_used, olmoe.n_vocab),
            std::make_tuple(1024u, 64u, 8u, 50304u));
  EXPECT_FALSE(olmoe.tied);

  // Qwen3-30B-A3B: heads of 128 although n_embd / n_head is 64.
  const SynthShape q3 = shape("qwen3-30b-a3b");
  EXPECT_EQ(std::tie(q3.n_layer, q3.n_embd, q3.n_head, q3.n_head_kv, q3.head_dim),
            std::make_tuple(48u, 2048u, 32u, 4u, 128u));
  EXPECT_EQ(std::tie(q3.n_ff, q3.n_expert, q3.n_expert_used, q3.n_vocab, q3.n_ctx),
            std::make_tuple(768u, 128u, 8u, 151936u, 40960u));
  EXPECT_EQ(q3.rope_theta, 1e6f);
  EXPECT_EQ(q3.rms_eps, 1e-6f);
  EXPECT_FALSE(q3.tied);
  EXPECT_EQ(q3.vocab_family, "qwen2");
}

// What the full qwen3-30b-a3b file would hold, without writing its 30 GB:
// the metadata llama.cpp reads and the tensor list.
TEST(SynthPresets, Qwen3MoeFullShapeHasTheRealModelsMetadataAndSize) {
  SynthOptions o;
  o.preset = "qwen3-30b-a3b";
  const ArchSpec& arch = resolve_arch(o);
  EXPECT_STREQ(arch.name, "qwen3moe");
  const SynthShape s = resolve_shape(o, arch);
  GgufMetadata md;
  write_arch_metadata(md, arch, s);
  EXPECT_EQ(md.get_int("qwen3moe.block_count"), 48);
  EXPECT_EQ(md.get_int("qwen3moe.embedding_length"), 2048);
  EXPECT_EQ(md.get_int("qwen3moe.attention.head_count"), 32);
  EXPECT_EQ(md.get_int("qwen3moe.attention.head_count_kv"), 4);
  EXPECT_EQ(md.get_int("qwen3moe.attention.key_length"), 128);
  EXPECT_EQ(md.get_int("qwen3moe.attention.value_length"), 128);
  EXPECT_EQ(md.get_int("qwen3moe.rope.dimension_count"), 128);
  EXPECT_EQ(md.get_int("qwen3moe.expert_count"), 128);
  EXPECT_EQ(md.get_int("qwen3moe.expert_used_count"), 8);
  EXPECT_EQ(md.get_int("qwen3moe.expert_feed_forward_length"), 768);
  EXPECT_EQ(md.get_int("qwen3moe.feed_forward_length"), 6144);  // config.json's intermediate_size
  EXPECT_EQ(md.get_int("qwen3moe.context_length"), 40960);
  EXPECT_EQ(md.get_int("qwen3moe.vocab_size"), 151936);

  const std::vector<TensorSpec> tensors = arch_tensors(arch, s);
  const std::map<std::string, std::vector<uint64_t>> expected_dims = {
      {"blk.0.attn_q.weight", {2048, 4096}},       {"blk.0.attn_k.weight", {2048, 512}},
      {"blk.0.attn_output.weight", {4096, 2048}},  {"blk.0.attn_q_norm.weight", {128}},
      {"blk.0.ffn_down_exps.weight", {768, 2048, 128}}};
  uint64_t params = 0, expert_params = 0;
  size_t checked = 0;
  for (const TensorSpec& t : tensors) {
    uint64_t n = 1;
    for (uint64_t d : t.dims) n *= d;
    params += n;
    if (t.name.ends_with("_exps.weight")) expert_params += n;
    if (const auto it = expected_dims.find(t.name); it != expected_dims.end()) {
      EXPECT_EQ(t.dims, it->second) << t.name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, expected_dims.size());
  // "30.5B total, 3.3B activated" (the model card).
  EXPECT_NEAR(static_cast<double>(params) / 1e9, 30.5, 0.05);
  EXPECT_NEAR(static_cast<double>(params - expert_params / 128 * (128 - 8)) / 1e9, 3.3, 0.06);
}

TEST(SynthPresets, AHeadDimensionOfItsOwnNeedsAnArchitectureThatStatesIt) {
  // Kept when the width changes (as across the Qwen3 family)...
  SynthOptions o;
  o.preset = "qwen3-30b-a3b";
  o.n_embd = 256;
  o.n_head = 4;
  EXPECT_EQ(resolve_shape(o, resolve_arch(o)).head_dim, 128u);
  // ...derived on architectures whose files cannot state it...
  EXPECT_EQ(shape("qwen3-30b-a3b", "mixtral").head_dim, 64u);
  EXPECT_EQ(shape("qwen3-30b-a3b", "qwen3").head_dim, 128u);
  // ...and refused there when asked for.
  SynthOptions llama;
  llama.arch = "llama";
  llama.head_dim = 32;
  EXPECT_THROW(resolve_shape(llama, resolve_arch(llama)), Error);
  llama.head_dim = 64;  // tiny's own n_embd / n_head
  EXPECT_EQ(resolve_shape(llama, resolve_arch(llama)).head_dim, 64u);
}

TEST(SynthPresets, MapOntoOtherArchitecturesKeepingTheActiveFfnWidth) {
  // A dense preset on a MoE arch: 8 experts, 2 used, each half as wide.
  const SynthShape moe = shape("llama-3.2-1b", "qwen3moe");
  EXPECT_EQ(std::tie(moe.n_expert, moe.n_expert_used, moe.n_ff), std::make_tuple(8u, 2u, 4096u));
  EXPECT_FALSE(moe.llama3_rope);  // qwen3moe's loader has no rope_freqs
  EXPECT_EQ(moe.vocab_family, "qwen2");
  // A MoE preset on a dense arch: one FFN as wide as the experts a token uses.
  const SynthShape dense = shape("olmoe-1b-7b", "llama");
  EXPECT_EQ(std::tie(dense.n_ff, dense.n_expert), std::make_tuple(8192u, 0u));
  EXPECT_EQ(shape("smollm2-135m", "mixtral").vocab_family, "llama3");
  // olmoe's k is as wide as q, so tiny's 2 kv heads become 4.
  EXPECT_EQ(shape("tiny", "olmoe").n_head_kv, 4u);
  EXPECT_FALSE(shape("tiny", "qwen2moe").tied);  // its loader requires output.weight
  EXPECT_EQ(shape("tiny", "qwen2moe").n_ff_shared(), 512u);
}

TEST(SynthPresets, TensorCountsOfTheRealModels) {
  auto count = [](const std::string& preset) {
    SynthOptions o;
    o.preset = preset;
    const ArchSpec& arch = resolve_arch(o);
    return arch_tensors(arch, resolve_shape(o, arch)).size();
  };
  EXPECT_EQ(count("qwen2.5-0.5b"), 290u);  // as in the real GGUF
  EXPECT_EQ(count("llama-3.2-1b"), 147u);  // rope_freqs included, output tied
  EXPECT_EQ(count("smollm2-135m"), 272u);
  EXPECT_EQ(count("olmoe-1b-7b"), 195u);
  EXPECT_EQ(count("qwen3-30b-a3b"), 579u);  // 12 per block, embd, output norm, output
}

TEST(SynthRope, Llama3FactorsRunFromOneToThirtyTwo) {
  const std::vector<float> f = llama3_rope_factors(kLlama3Rope, 64, 500000.f);
  ASSERT_EQ(f.size(), 32u);
  EXPECT_EQ(f.front(), 1.0f);
  EXPECT_EQ(f.back(), 32.0f);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]);
  bool smoothed = false;  // some frequencies fall between the two wavelengths
  for (float x : f) smoothed |= x > 1.0f && x < 32.0f;
  EXPECT_TRUE(smoothed);
}

TEST(SynthVocab, RealSizesBuildFastWithValidMerges) {
  GgufMetadata md;
  const auto start = std::chrono::steady_clock::now();
  write_vocab(md, "qwen2", 151936);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  const GgufArray& tokens = md.get_array("tokenizer.ggml.tokens");
  const GgufArray& merges = md.get_array("tokenizer.ggml.merges");
  ASSERT_EQ(tokens.size(), 151936u);
  EXPECT_EQ(merges.size(), 151936u - 256 - 3);
  EXPECT_EQ(tokens.string_at(' '), "\xC4\xA0");  // GPT-2's 'Ġ'
  EXPECT_EQ(tokens.string_at('a'), "a");
  EXPECT_EQ(tokens.string_at(151935), "<|im_end|>");
  EXPECT_EQ(md.get_string("tokenizer.ggml.pre"), "qwen2");
  EXPECT_FALSE(md.get_bool("tokenizer.ggml.add_bos_token"));
  std::set<std::string> seen;
  for (size_t i = 0; i < tokens.size(); ++i) seen.insert(tokens.string_at(i));
  EXPECT_EQ(seen.size(), tokens.size());
  // Each merge's left part is an earlier result and its result is the token
  // it introduces: merge i makes token 256 + i.
  for (size_t i = 0; i < merges.size(); i += 997) {
    const std::string& m = merges.string_at(i);
    const size_t sp = m.find(' ');
    EXPECT_EQ(m.substr(0, sp) + m.substr(sp + 1), tokens.string_at(256 + i));
  }

  GgufMetadata llama;
  write_vocab(llama, "llama3", 128256);
  EXPECT_EQ(llama.get_string("tokenizer.ggml.pre"), "llama-bpe");
  EXPECT_TRUE(llama.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_EQ(llama.get_array("tokenizer.ggml.tokens")
                .string_at(llama.get_int("tokenizer.ggml.bos_token_id")),
            "<|begin_of_text|>");
}

}  // namespace
}  // namespace synapse::synth
