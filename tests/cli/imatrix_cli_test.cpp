// synapse imatrix on stories260K (real weights): an imatrix file in
// llama-imatrix's layout, one entry per block weight with every token of
// every chunk counted, that synapse quantize --imatrix then uses (and
// records); flag and text errors exit 2 and 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "format/gguf_reader.h"
#include "quantize/imatrix_file.h"
#include "support/command_runner.h"
#include "support/shared_data.h"
#include "support/story_text.h"
#include "support/temp_dir.h"

namespace synapse::test {
namespace {

class ImatrixCli : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = shared_data("gguf/stories260K-f32.gguf").string();
    if (!std::filesystem::exists(model_))
      GTEST_SKIP() << "shared test data " << model_ << " is absent (needs shared/data next to the source tree)";
    text_ = dir_.file("story.txt");
    std::ofstream(text_) << story_text(12000);
  }
  TempDir dir_;
  std::string model_, text_;
};

TEST_F(ImatrixCli, CollectsEveryBlockWeightOverEveryTokenAndQuantizeUsesIt) {
  const std::string imatrix = dir_.file("imatrix.gguf");
  auto run = run_synapse({"imatrix", "-m", model_, "-f", text_, "-c", "128", "--chunks", "4", "-o", imatrix}, true);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("Final estimate: PPL = "), std::string::npos) << run.out;
  const quant::Imatrix m = quant::read_imatrix(imatrix);
  EXPECT_EQ(m.chunk_count, 4u);
  EXPECT_EQ(m.chunk_size, 128u);
  EXPECT_EQ(m.datasets, std::vector<std::string>{text_});
  EXPECT_EQ(m.entries.size(), 5u * 7u);  // 5 layers of q, k, v, output, gate, up, down
  for (const auto& [name, entry] : m.entries) {
    EXPECT_EQ(name.rfind("blk.", 0), 0u) << name;
    EXPECT_EQ(entry.counts, std::vector<float>{4.0f * 128.0f}) << name;
    for (float s : entry.in_sum2) EXPECT_GE(s, 0.0f) << name;
  }
  EXPECT_EQ(m.entries.at("blk.0.attn_q.weight").in_sum2, m.entries.at("blk.0.attn_v.weight").in_sum2);

  const std::string plain = dir_.file("plain.gguf"), weighted = dir_.file("weighted.gguf");
  ASSERT_EQ(run_synapse({"quantize", model_, plain, "q4_0"}).exit_code, 0);
  ASSERT_EQ(run_synapse({"quantize", model_, weighted, "q4_0", "--imatrix", imatrix}).exit_code, 0);
  const GgufFile file = GgufFile::open(weighted);
  EXPECT_EQ(file.metadata().get_int("quantize.imatrix.entries_count"), 35);
  EXPECT_EQ(file.metadata().get_int("quantize.imatrix.chunks_count"), 4);
  const GgufFile unweighted = GgufFile::open(plain);
  const auto& q = *file.find_tensor("blk.2.attn_q.weight");
  const auto& p = *unweighted.find_tensor("blk.2.attn_q.weight");
  const auto a = file.tensor_data(q), b = unweighted.tensor_data(p);
  EXPECT_FALSE(std::equal(a.begin(), a.end(), b.begin(), b.end()));  // the importance moved the rounding
  auto generated = run_synapse({"run", "-m", weighted, "-p", "Once", "-n", "4", "--temp", "0"});
  EXPECT_EQ(generated.exit_code, 0);
}

TEST_F(ImatrixCli, MissingTextIsAUsageErrorAndAShortTextABadInput) {
  EXPECT_EQ(run_synapse({"imatrix", "-m", model_}, true).exit_code, 2);
  const std::string shorty = dir_.file("short.txt");
  std::ofstream(shorty) << "Once upon a time.";
  auto run = run_synapse({"imatrix", "-m", model_, "-f", shorty, "-o", dir_.file("x.gguf")}, true);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("x.gguf")));
}

}  // namespace
}  // namespace synapse::test
