// Every file synth writes must load in llama.cpp (through synapse-peer) and
// give finite logits: architecture × type at the tiny preset, every real
// preset × type with its layer shapes, and every architecture × real preset
// with its full vocabulary.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "synth/synth.h"
#include "synth/synth_arch.h"

namespace synapse {
namespace {

// Runs four tokens through llama.cpp and checks every logit is finite.
void expect_loads_with_finite_logits(const SynthOptions& o, const std::string& label) {
  test::TempDir dir;
  const std::string model = dir.file("m.gguf"), dump = dir.file("logits.f32");
  ASSERT_NO_THROW(synth_model(o, model)) << label;
  auto r = test::run_peer({"logits", model, "1", "2", "3", "4", "--dump", dump});
  ASSERT_EQ(r.exit_code, 0) << label << " did not load in llama.cpp";
  std::ifstream in(dump, std::ios::binary);
  std::vector<char> raw{std::istreambuf_iterator<char>(in), {}};
  ASSERT_GT(raw.size(), 0u) << label;
  ASSERT_EQ(raw.size() % (4 * sizeof(float)), 0u) << label;
  const auto* logits = reinterpret_cast<const float*>(raw.data());
  for (size_t i = 0; i < raw.size() / sizeof(float); ++i)
    ASSERT_TRUE(std::isfinite(logits[i])) << label << ": logit " << i << " = " << logits[i];
}

std::string label_of(const SynthOptions& o) {
  return o.arch + "/" + o.preset + "/" + o.type + (o.n_layer ? "/1 layer" : "");
}

TEST(SynthPeer, EveryArchitectureAndTypeAtTinyLoadsInLlamaCpp) {
  SYNAPSE_SKIP_UNLESS_PEER();
  for (const auto& arch : synth_arches()) {
    for (const auto& type : synth_types()) {
      SynthOptions o;
      o.arch = arch;
      o.preset = "tiny";
      o.type = type;
      o.seed = 3;
      expect_loads_with_finite_logits(o, label_of(o));
    }
  }
}

// Real presets keep every per-layer tensor shape (row lengths decide block
// fits and fallbacks); one layer and a 2048-token vocabulary keep the suite
// fast, since layers repeat the same shapes and vocabulary only adds rows
// (likewise experts, for the 64- and 128-expert presets).
TEST(SynthPeer, EveryRealPresetAndTypeLoadsInLlamaCpp) {
  SYNAPSE_SKIP_UNLESS_PEER();
  for (const auto& preset : synth_presets()) {
    if (preset == "tiny") continue;
    for (const auto& type : synth_types()) {
      SynthOptions o;
      o.preset = preset;
      o.type = type;
      o.n_layer = 1;
      o.n_vocab = 2048;
      if (preset == "olmoe-1b-7b" || preset == "qwen3-30b-a3b") o.n_expert = 8;  // rows keep their shapes
      expect_loads_with_finite_logits(o, label_of(o));
    }
  }
}

// The real vocabulary sizes (up to 151,936 tokens) with every architecture;
// at most 8 experts, which only add rows.
TEST(SynthPeer, EveryArchitectureWithEveryRealPresetLoadsInLlamaCpp) {
  SYNAPSE_SKIP_UNLESS_PEER();
  for (const auto& preset : synth_presets()) {
    if (preset == "tiny") continue;
    for (const auto& arch : synth_arches()) {
      SynthOptions o;
      o.arch = arch;
      o.preset = preset;
      o.type = "q8_0";
      o.n_layer = 1;
      if (synth::find_arch(arch)->moe) o.n_expert = 8;
      expect_loads_with_finite_logits(o, label_of(o));
    }
  }
}

}  // namespace
}  // namespace synapse
