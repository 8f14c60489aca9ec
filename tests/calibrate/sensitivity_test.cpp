// measure_sensitivity on a tiny model: re-encoding a group to F16 barely
// moves the predictions, to Q4_0 moves them more; dropping a layer moves
// them a lot; bytes are the group's in each type; the table survives JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "calibrate/sensitivity.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::calibrate {
namespace {

TEST(Sensitivity, F16BarelyMovesQ4MovesMoreAndDroppingALayerMostAndTheTableRoundTrips) {
  const test::TempDir dir;
  SynthOptions options;
  options.seed = 11;
  synth_model(options, dir.file("tiny.gguf"));
  const Model model = load_model(dir.file("tiny.gguf"), {.max_ctx = 32, .chunk = 32});
  std::mt19937 rng(3);
  std::vector<int32_t> tokens(96);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % 512);
  SensitivityRun run;
  run.tokens = tokens;
  run.layout = eval::chunk_layout(static_cast<int64_t>(tokens.size()), 32, -1);
  run.types = {Encoding::F16, Encoding::Q4_0};
  run.layers = true;
  const std::string scratch = std::filesystem::path(dir.file("tiny.gguf")).parent_path().string();
  run.scratch_dir = scratch;
  const SensitivityTable table = measure_sensitivity(model, "tiny.gguf", run);
  EXPECT_GT(table.ppl, 1.0);
  EXPECT_EQ(table.tokens, 3 * (32 - 1 - 16));
  ASSERT_EQ(table.groups.size(), 5u);
  for (const GroupSensitivity& g : table.groups) {
    ASSERT_EQ(g.candidates.size(), 2u);
    const SensitivityCandidate& f16 = g.candidates[0];
    const SensitivityCandidate& q4 = g.candidates[1];
    EXPECT_EQ(f16.bytes * 2, g.stored_bytes) << g.name;  // the file is f32
    EXPECT_EQ(q4.bytes * 128, g.stored_bytes * 18) << g.name;
    EXPECT_LT(f16.kl, 1e-4) << g.name;
    EXPECT_GT(q4.kl, f16.kl) << g.name;
  }
  ASSERT_EQ(table.layers.size(), 2u);
  for (const LayerSensitivity& l : table.layers) EXPECT_GT(l.kl, table.groups[1].candidates[1].kl) << l.layer;
  // The scratch files are gone: only the model is left.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch), {}), 1);

  const SensitivityTable back = sensitivity_from_json(to_json(table));
  EXPECT_EQ(to_json(back), to_json(table));
  EXPECT_THROW(sensitivity_from_json(nlohmann::json{{"model", 1}}), Error);
}

}  // namespace
}  // namespace synapse::calibrate
