// The public API alone (include/synapse/) drives a real model to run.c's
// greedy tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/command_runner.h"
#include "synapse/synapse.h"

namespace synapse {
namespace {

TEST(PublicApi, GreedyStories260KFromBosEqualsRunC) {
  const auto model_path = test::shared_data("stories260K/stories260K.bin");
  const auto ids_path = test::shared_data("reference/s260_greedy_noprompt.ids");
  if (!std::filesystem::exists(model_path)) GTEST_SKIP() << "shared test data not found (../shared/data)";
  std::ifstream in(ids_path);
  std::string line, label;
  std::vector<int32_t> expected;
  while (std::getline(in, line))
    if (line.rfind("next_ids:", 0) == 0) {
      std::istringstream words(line.substr(9));
      int32_t id;
      while (words >> id) expected.push_back(id);
    }
  ASSERT_GE(expected.size(), 32u);

  LoadedModel model = LoadedModel::open(model_path.string());
  EXPECT_EQ(model.vocab_size(), 512);
  EXPECT_EQ(model.fingerprint().size(), 64u);
  InferenceSession session(model);
  SamplingParams greedy;
  greedy.temp = 0;
  TokenSampler sampler(model, greedy);
  int32_t token = 1;
  for (size_t i = 0; i < 32; ++i) {
    token = sampler.sample(session.eval(std::span<const int32_t>(&token, 1)));
    sampler.accept(token);
    ASSERT_EQ(token, expected[i]) << "step " << i;
  }
  EXPECT_EQ(session.position(), 32);
  session.reset();
  EXPECT_EQ(session.position(), 0);
}

TEST(PublicApi, OpeningAMissingFileIsATypedError) {
  try {
    LoadedModel::open("/nonexistent/model.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

}  // namespace
}  // namespace synapse
