// synapse run against llama.cpp (synapse-peer) on synthetic dense models;
// see support/peer_greedy.h for what is compared and why near-ties end it.
#include <gtest/gtest.h>

#include "support/peer_greedy.h"

namespace synapse {
namespace {

struct Case {
  const char* arch;
  const char* type;
  float tolerance;  // logits, absolute
};

class RunPeer : public ::testing::TestWithParam<Case> {};

TEST_P(RunPeer, SynthTinyGreedyEqualsLlamaCppUpToANearTie) {
  SYNAPSE_SKIP_UNLESS_PEER();
  test::expect_greedy_equals_peer(GetParam().arch, GetParam().type, GetParam().tolerance);
}

// Tolerances: F32 differs by summation order only; F16 and the quantized
// types by llama.cpp's reduced-precision activations.
INSTANTIATE_TEST_SUITE_P(
    Synth, RunPeer,
    ::testing::Values(Case{"llama", "f32", 2e-3f}, Case{"llama", "f16", 0.05f}, Case{"llama", "q8_0", 0.15f},
                      Case{"llama", "q4_k", 0.15f}, Case{"qwen2", "f32", 2e-3f}, Case{"qwen2", "f16", 0.05f},
                      Case{"qwen2", "q8_0", 0.15f}, Case{"qwen2", "q4_k", 0.15f}, Case{"qwen3", "f32", 2e-3f},
                      Case{"qwen3", "f16", 0.05f}, Case{"qwen3", "q8_0", 0.15f}, Case{"qwen3", "q4_k", 0.15f}),
    [](const auto& info) { return std::string(info.param.arch) + "_" + info.param.type; });

}  // namespace
}  // namespace synapse
