// synapse run on the real stories260K weights against llama2.c's run.c and
// llama.cpp (reference files in ../shared/data/reference).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/command_runner.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace synapse {
namespace {

constexpr int kVocab = 512;

struct Reference {
  std::vector<int32_t> ids;
  std::vector<float> logits;  // [ids, vocab]
};

// Reads `<stem>.ids` (its next_ids line) and `<stem>.logits.f32`.
Reference read_reference(const std::filesystem::path& stem) {
  Reference r;
  std::ifstream in(stem.string() + ".ids");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("next_ids:", 0) == 0) r.ids = test::parse_ids(line.substr(9));
  r.logits = test::read_floats(stem.string() + ".logits.f32");
  return r;
}

// Greedy from BOS: the generated ids and every logits row.
Reference run_greedy(const std::string& model, const test::TempDir& dir) {
  const std::string dump = dir.file("logits.f32");
  auto r = test::run_synapse({"run", "-m", model, "--tokens", "1", "-n", "256", "--temp", "0", "--ignore-eos",
                              "--ids", "--dump-logits", dump, "--cache-type-k", "f32", "--cache-type-v", "f32"});  // run.c's cache
  EXPECT_EQ(r.exit_code, 0);
  return {test::parse_ids(test::last_line(r.out)), test::read_floats(dump)};
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, size_t rows) {
  float worst = 0;
  for (size_t i = 0; i < rows * kVocab; ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

#define SKIP_WITHOUT_SHARED_DATA()                                                           \
  if (!std::filesystem::exists(test::shared_data("reference")))                             \
  GTEST_SKIP() << "shared test data not found (../shared/data): real-weight tests skipped"

class RunStories : public ::testing::TestWithParam<const char*> {};

// llama2.c checkpoint, its f32 GGUF twin and its Hugging Face folder (F32
// safetensors): exactly run.c's tokens, and its logits within 1e-4.
TEST_P(RunStories, GreedyFromBosEqualsLlama2cRunC) {
  SKIP_WITHOUT_SHARED_DATA();
  test::TempDir dir;
  const Reference ref = read_reference(test::shared_data("reference/s260_greedy_noprompt"));
  const Reference ours = run_greedy(test::shared_data(GetParam()).string(), dir);
  ASSERT_EQ(ours.ids, ref.ids);
  ASSERT_EQ(ours.logits.size(), ref.logits.size());
  EXPECT_LT(max_abs_diff(ours.logits, ref.logits, ref.ids.size()), 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(RealWeights, RunStories,
                         ::testing::Values("stories260K/stories260K.bin", "gguf/stories260K-f32.gguf",
                                           "hf-models/stories260K-hf"));

// llama.cpp's own quantized files: llama.cpp quantizes activations to 8 bits
// in its dot products and we do not, so tokens agree while the two stay
// clear of a near-tie. We must follow llama.cpp at least as far as llama.cpp
// itself follows run.c, with logits within kQuantTolerance until then.
struct QuantCase {
  const char* type;
  size_t llamacpp_matches_runc;  // steps (from data/README.md)
  float tolerance;
};

class RunStoriesQuantized : public ::testing::TestWithParam<QuantCase> {};

TEST_P(RunStoriesQuantized, FollowsLlamaCppTokensAndLogits) {
  SKIP_WITHOUT_SHARED_DATA();
  const QuantCase c = GetParam();
  test::TempDir dir;
  const std::string stem = std::string("reference/llamacpp/s260-") + c.type + ".greedy_noprompt";
  const Reference ref = read_reference(test::shared_data(stem));
  const Reference ours =
      run_greedy(test::shared_data(std::string("gguf/stories260K-") + c.type + ".gguf").string(), dir);
  size_t same = 0;
  while (same < ours.ids.size() && same < ref.ids.size() && ours.ids[same] == ref.ids[same]) ++same;
  EXPECT_GE(same, c.llamacpp_matches_runc) << c.type;
  // Logits rows up to and including the first differing choice.
  const size_t rows = std::min(same + 1, ref.ids.size());
  EXPECT_LT(max_abs_diff(ours.logits, ref.logits, rows), c.tolerance) << c.type;
}

INSTANTIATE_TEST_SUITE_P(RealWeights, RunStoriesQuantized,
                         // q5_0: run.c's own top-2 gap at step 61 is 0.071, inside
                         // the Q5_0 weights' noise, and our 8-bit activations (a
                         // float scale, llama.cpp's an fp16 one) break that tie the
                         // other way from llama.cpp's: 61 steps, a logit 0.36 apart
                         // on the row of the tie.
                         ::testing::Values(QuantCase{"f16", 256, 0.02f}, QuantCase{"q8_0", 114, 0.35f},
                                           QuantCase{"q5_0", 61, 0.4f}, QuantCase{"q4_0", 27, 0.35f}),
                         [](const auto& info) { return std::string(info.param.type); });

}  // namespace
}  // namespace synapse
