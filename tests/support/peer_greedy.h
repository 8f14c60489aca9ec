// The comparison of `synapse run` with llama.cpp (synapse-peer greedy) on a
// synthetic tiny model: 64 greedy tokens from three prompts must be
// llama.cpp's, until the two meet a near-tie, and the logits rows must agree
// within the tolerance.
//
// llama.cpp quantizes activations to 8 bits inside quantized dot products;
// we keep them in float, so quantized models differ by small amounts. A
// near-tie is a step where the two engines' choices are within the tolerance
// of each other in our logits; the comparison of tokens ends there.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synth/synth.h"

namespace synapse::test {

// The comparison on `model`, a model of the tiny preset's vocabulary;
// `what` names it in failures.
inline void expect_model_greedy_equals_peer(const std::string& model, const std::string& what, float tolerance) {
  constexpr int kGenerate = 64;
  constexpr int kVocab = 512;  // the tiny preset
  TempDir dir;

  const std::vector<std::vector<std::string>> prompts = {
      {"1"}, {"1", "17", "300", "42", "7"}, {"5", "400", "400", "123", "88", "9", "250", "31", "64", "500"}};
  for (const auto& prompt : prompts) {
    std::string joined;
    for (const auto& t : prompt) joined += (joined.empty() ? "" : " ") + t;
    const std::string ours_dump = dir.file("ours.f32"), peer_dump = dir.file("peer.f32");
    auto ours = run_synapse({"run", "-m", model, "--tokens", joined, "-n", std::to_string(kGenerate), "--temp", "0",
                             "--ignore-eos", "--ids", "--dump-logits", ours_dump, "--cache-type-k", "f32",
                             "--cache-type-v", "f32"});  // as the peer's --kv f32
    ASSERT_EQ(ours.exit_code, 0) << what;
    std::vector<std::string> peer_args = {"greedy", model, "-n", std::to_string(kGenerate), "--kv", "f32",
                                          "--fa", "off", "--dump", peer_dump};
    peer_args.insert(peer_args.end(), prompt.begin(), prompt.end());
    auto peer = run_peer(peer_args);
    ASSERT_EQ(peer.exit_code, 0) << what;

    const auto our_ids = parse_ids(last_line(ours.out));
    const auto peer_ids = parse_ids(last_line(peer.out));
    ASSERT_EQ(our_ids.size(), static_cast<size_t>(kGenerate));
    ASSERT_EQ(peer_ids.size(), static_cast<size_t>(kGenerate));
    const auto our_rows = read_floats(ours_dump), peer_rows = read_floats(peer_dump);
    const size_t first = prompt.size() - 1;  // our row of generation step 0
    ASSERT_EQ(our_rows.size(), (first + kGenerate - 1) * kVocab + kVocab);
    ASSERT_GE(peer_rows.size(), static_cast<size_t>(kGenerate - 1) * kVocab);

    for (int step = 0; step < kGenerate; ++step) {
      const float* our_row = our_rows.data() + (first + static_cast<size_t>(step)) * kVocab;
      const float* peer_row = peer_rows.data() + static_cast<size_t>(step) * kVocab;
      float worst = 0;
      for (int v = 0; v < kVocab; ++v) worst = std::max(worst, std::abs(our_row[v] - peer_row[v]));
      ASSERT_LT(worst, tolerance) << what << " prompt '" << joined << "' step " << step;
      if (our_ids[step] != peer_ids[step]) {
        const float gap = std::abs(our_row[our_ids[step]] - our_row[peer_ids[step]]);
        EXPECT_LT(gap, tolerance) << what << " prompt '" << joined << "': tokens differ at step " << step
                                  << " without a near-tie";
        break;  // the sequences part at a near-tie: later steps see different tokens
      }
    }
  }
}

// The comparison on the tiny synthetic model of `arch` in `type`.
inline void expect_greedy_equals_peer(const std::string& arch, const std::string& type, float tolerance) {
  TempDir dir;
  SynthOptions o;
  o.arch = arch;
  o.preset = "tiny";
  o.type = type;
  o.seed = 11;
  const std::string model = dir.file("m.gguf");
  synth_model(o, model);
  expect_model_greedy_equals_peer(model, arch + " " + type, tolerance);
}

}  // namespace synapse::test
