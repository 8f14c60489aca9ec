// synapse tokenize / detokenize and synapse run -p on the stories260K GGUF.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/command_runner.h"
#include "support/test_files.h"

namespace synapse {
namespace {

std::string stories_gguf() { return test::shared_data("gguf/stories260K-f32.gguf").string(); }

#define SKIP_WITHOUT_STORIES()                          \
  if (!std::filesystem::exists(stories_gguf()))         \
  GTEST_SKIP() << "shared test data not found (../shared/data)"

TEST(CliTokenize, PrintsTheIdsLlamaCppGivesWithBos) {
  SKIP_WITHOUT_STORIES();
  auto r = test::run_synapse({"tokenize", "-m", stories_gguf(), "Once upon a time"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "[1,403,407,261,378]\n");  // synapse-peer tokenize gives the same
  r = test::run_synapse({"tokenize", "-m", stories_gguf(), "--no-bos", "Once upon a time"});
  EXPECT_EQ(r.out, "[403,407,261,378]\n");
}

TEST(CliTokenize, DetokenizeGivesTheTextBack) {
  SKIP_WITHOUT_STORIES();
  auto r = test::run_synapse({"detokenize", "-m", stories_gguf(), "403", "407", "261", "378"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "Once upon a time\n");
  EXPECT_EQ(test::run_synapse({"detokenize", "-m", stories_gguf(), "512"}, true).exit_code, 1);
}

TEST(CliRunPrompt, TextPromptIsTokenizedAsTheTokenIds) {
  SKIP_WITHOUT_STORIES();
  auto by_text = test::run_synapse({"run", "-m", stories_gguf(), "-p", "Once upon a time", "-n", "8", "--temp",
                                    "0", "--ids"});
  auto by_ids = test::run_synapse({"run", "-m", stories_gguf(), "--tokens", "1 403 407 261 378", "-n", "8",
                                   "--temp", "0", "--ids"});
  ASSERT_EQ(by_text.exit_code, 0);
  EXPECT_EQ(test::last_line(by_text.out), test::last_line(by_ids.out));
  EXPECT_EQ(test::parse_ids(test::last_line(by_text.out)).size(), 8u);
}

}  // namespace
}  // namespace synapse
