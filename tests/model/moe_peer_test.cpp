// Mixture-of-experts models through the region scheduler against llama.cpp
// (synapse-peer): synthetic tiny OLMoE, Mixtral, Qwen2-MoE and Qwen3-MoE give
// llama.cpp's 64 greedy tokens from three prompts, with logits within the
// stated tolerance (see support/peer_greedy.h).
#include <gtest/gtest.h>

#include "support/peer_greedy.h"

namespace synapse {
namespace {

struct Case {
  const char* arch;
  const char* type;
  float tolerance;  // logits, absolute
};

class MoePeer : public ::testing::TestWithParam<Case> {};

TEST_P(MoePeer, SynthTinyGreedyEqualsLlamaCppUpToANearTie) {
  SYNAPSE_SKIP_UNLESS_PEER();
  test::expect_greedy_equals_peer(GetParam().arch, GetParam().type, GetParam().tolerance);
}

// F32 only: logits differ by summation order alone (2e-3). With F16 or
// quantized weights llama.cpp rounds the activations entering each matrix
// product, which moves router scores slightly; where two experts nearly tie
// for the k-th place the two engines then pick different experts, a
// discrete jump in the logits (seen on olmoe q8_0 and f16 after 15 tokens,
// mixtral f16 after 5) that no logits tolerance covers.
INSTANTIATE_TEST_SUITE_P(Synth, MoePeer,
                         ::testing::Values(Case{"olmoe", "f32", 2e-3f}, Case{"mixtral", "f32", 2e-3f},
                                           Case{"qwen2moe", "f32", 2e-3f}, Case{"qwen3moe", "f32", 2e-3f}),
                         [](const auto& info) { return std::string(info.param.arch) + "_" + info.param.type; });

}  // namespace
}  // namespace synapse
