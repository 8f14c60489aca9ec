// RoPE scaling as the GGUF metadata states it, against llama.cpp:
// teacher-forced logits of small synthetic files with linear, YaRN and
// Llama 3 (rope_freqs) scaling, at positions far past the original context
// (300 tokens; YaRN's original context is 64), in one prefill batch and in
// single-token decode steps. Every row must agree within f32's tolerance.
//
// So that a scaling read wrongly or not at all cannot pass, each file's
// unscaled twin (the same weights without the rope.scaling keys and
// rope_freqs.weight) must move llama.cpp's logits by many tolerances.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>

#include "model/model_test_files.h"
#include "peer/teacher_forced_logits.h"
#include "support/command_runner.h"
#include "support/logit_comparison.h"
#include "support/temp_dir.h"
#include "synth/synth.h"
#include "synth/synth_arch.h"

namespace synapse::test {
namespace {

constexpr size_t kRopeTokens = 300;
// How far the scaling must move llama.cpp's logits, in tolerances.
constexpr float kMinScalingEffect = 100;

struct RopeCase {
  const char* name;
  SynthOptions synth;
};

// Two layers, head_dim 32 (16 rotated pairs), GQA 4:2, in f32, whose
// tolerance is the tightest.
SynthOptions small(const char* arch, const char* preset) {
  SynthOptions o;
  o.arch = arch;
  o.preset = preset;
  o.type = "f32";
  o.seed = 17;
  o.n_layer = 2;
  o.n_embd = 128;
  o.n_head = 4;
  o.n_head_kv = 2;
  o.n_ff = 256;
  o.n_vocab = 512;  // the llama3 tokenizer needs 261 tokens at least
  return o;
}

RopeCase linear(const char* arch) {
  RopeCase c{"linear4", small(arch, "tiny")};
  c.synth.rope_scaling = {"linear", 4};
  return c;
}
// YaRN with an original context of its own (context_length stays 2048).
RopeCase yarn(const char* arch) {
  RopeCase c{"yarn4_orig64", small(arch, "tiny")};
  c.synth.rope_scaling = {"yarn", 4, 64};
  return c;
}
// YaRN without rope.scaling.original_context_length: llama.cpp takes
// context_length as the original context.
RopeCase yarn_from_context_length(const char* arch) {
  RopeCase c{"yarn4_ctx64", small(arch, "tiny")};
  c.synth.n_ctx = 64;
  c.synth.rope_scaling = {"yarn", 4};
  return c;
}
// Llama 3.2's rope_freqs.weight (factor 32, low 1, high 4, original 8192)
// and theta 500000: pairs 0-7 turn unscaled, 8 in between, 9-15 32 times
// slower.
RopeCase llama3_rope_freqs() { return {"llama32_rope_freqs", small("llama", "llama-3.2-1b")}; }

std::string rope_case_name(const RopeCase& c) { return c.synth.arch + "_" + c.name; }
void PrintTo(const RopeCase& c, std::ostream* os) { *os << rope_case_name(c); }

// The same file without its scaling.
GgufEdit without_scaling(const std::string& arch) {
  GgufEdit edit;
  edit.metadata = [arch](GgufMetadata& md) {
    for (const char* key : {"rope.scaling.type", "rope.scaling.factor", "rope.scaling.original_context_length"})
      md.erase(arch + "." + key);
  };
  edit.dims = [](const GgufTensorInfo& t) -> std::optional<std::vector<uint64_t>> {
    if (t.name == "rope_freqs.weight") return std::nullopt;
    return t.dims;
  };
  return edit;
}

class PeerRopeScaling : public ::testing::TestWithParam<RopeCase> {};

TEST_P(PeerRopeScaling, LogitsPastTheOriginalContextMatchLlamaCpp) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const SynthOptions& o = GetParam().synth;
  TempDir dir;
  const std::string model = dir.file("scaled.gguf"), twin = dir.file("unscaled.gguf");
  synth_model(o, model);
  const synth::ArchSpec& arch = synth::resolve_arch(o);
  rewrite_gguf(model, twin, without_scaling(arch.gguf_arch));
  const uint32_t vocab = synth::resolve_shape(o, arch).n_vocab;
  const std::vector<std::string> ids = token_ids(kRopeTokens, vocab, 31);

  const std::vector<float> prefill = peer_logits(model, ids, kRopeTokens, dir.file("peer.f32"));
  ASSERT_EQ(prefill.size(), kRopeTokens * vocab);
  const Tolerance& t = tolerance_of(o.type);
  const auto tolerance = static_cast<float>(t.max_abs_diff * root_mean_square(prefill));
  const std::vector<float> unscaled = peer_logits(twin, ids, kRopeTokens, dir.file("twin.f32"));
  ASSERT_EQ(unscaled.size(), kRopeTokens * vocab);
  const float effect = compare_logits(prefill, unscaled, vocab, tolerance).max_abs_diff;
  EXPECT_GT(effect, kMinScalingEffect * tolerance) << "the scaling hardly changes llama.cpp's logits";

  for (const size_t batch : {kRopeTokens, size_t{1}}) {
    const char* phase = batch == 1 ? "decode" : "prefill";
    const std::vector<float> peer = batch == kRopeTokens ? prefill : peer_logits(model, ids, batch, dir.file("peer.f32"));
    // One thread, as the peer: a tiny model's steps gain nothing from more.
    const std::vector<float> ours = our_logits(model, ids, batch, dir.file("ours.f32"), {.ctx = kRopeTokens, .threads = 1});
    ASSERT_EQ(peer.size(), kRopeTokens * vocab) << phase;
    ASSERT_EQ(ours.size(), kRopeTokens * vocab) << phase;
    const LogitComparison s = compare_logits(peer, ours, vocab, tolerance);
    // case, phase, the scaling's effect on the peer, max |delta|, rows over, mean KL
    std::printf("| %s | %s | %.3g | %.3g | %zu | %.3g |\n", rope_case_name(GetParam()).c_str(), phase, effect,
                s.max_abs_diff, s.rows_over, s.mean_kl);
    const std::string what = std::string(phase) + ": " + s.summary();
    EXPECT_EQ(s.rows_over, 0u) << what;
    EXPECT_LE(s.mean_kl, t.mean_kl) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Ci, PeerRopeScaling,
                         ::testing::Values(linear("llama"), linear("qwen2"), yarn("qwen2"),
                                           yarn_from_context_length("llama"), llama3_rope_freqs()),
                         [](const auto& info) { return rope_case_name(info.param); });

}  // namespace
}  // namespace synapse::test
