// quantize --target-bytes on a synth llama with a hand-made sensitivity
// table: the written file is within the target and exactly the predicted
// size, its groups have the types of the least-KL combination that fits
// (found here by trying every one), the smallest file the table allows is
// the least target accepted, and tables of another model are refused.
#include "calibrate/size_target.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>

#include "calibrate/hand_made_table.h"
#include "format/gguf_reader.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse::calibrate {
namespace {

class SizeTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SynthOptions o;
    o.arch = "llama";
    o.seed = 5;
    o.n_layer = 2;
    o.n_ff = 160;  // ffn_down rows of 160: q4_K and q6_K fall back to q5_0 and q8_0
    synth_model(o, input_);
    table_ = test::hand_made_table(input_, {Encoding::Q4_0, Encoding::Q4_K, Encoding::Q6_K, Encoding::Q8_0});
    options_.input = input_;
    options_.output = dir_.file("out.gguf");
    options_.type = quant::find_quant_type("q4_k_m");
    options_.threads = 2;
  }

  // Quantizes with `target`'s profile; the file's size.
  uint64_t write(const SizeTarget& target) {
    quant::QuantizeOptions o = options_;
    o.overrides = target.overrides;
    quant::quantize_model(o);
    return std::filesystem::file_size(o.output);
  }

  // The size of the file whose groups take candidates `picks`, measured.
  uint64_t measured_size(const std::vector<size_t>& picks) {
    quant::QuantizeOptions o = options_;
    o.overrides = quant::parse_profile(profile_text(table_, {picks}), "picks");
    return quant::plan_quantize(o).file_bytes;
  }

  test::TempDir dir_;
  std::string input_ = dir_.file("llama.gguf");
  SensitivityTable table_;
  quant::QuantizeOptions options_;
};

TEST_F(SizeTargetTest, FileFitsTheTargetWithTheLeastKlCombination) {
  const std::vector<size_t> smallest(table_.groups.size(), 0), largest(table_.groups.size(), 3);
  const uint64_t least = measured_size(smallest), most = measured_size(largest);
  ASSERT_LT(least, most);
  // Every combination's file size from its bytes over the smallest one's
  // (each tensor is padded to the alignment of 32).
  std::vector<std::vector<uint64_t>> extra(table_.groups.size());
  for (size_t g = 0; g < table_.groups.size(); ++g)
    for (size_t c = 0; c < 4; ++c) {
      std::vector<size_t> picks = smallest;
      picks[g] = c;
      extra[g].push_back(measured_size(picks) - least);
    }
  for (const double share : {0.2, 0.5, 0.85}) {
    const auto target = static_cast<uint64_t>(least + share * static_cast<double>(most - least));
    double best = std::numeric_limits<double>::infinity();
    std::function<void(size_t, uint64_t, double)> walk = [&](size_t g, uint64_t bytes, double kl) {
      if (bytes > target) return;
      if (g == table_.groups.size()) {
        best = std::min(best, kl);
        return;
      }
      for (size_t c = 0; c < 4; ++c) walk(g + 1, bytes + extra[g][c], kl + table_.groups[g].candidates[c].kl);
    };
    walk(0, least, 0.0);

    const SizeTarget t = fit_to_size(options_, table_, target);
    EXPECT_NEAR(t.choice.kl, best, 1e-12) << share;
    EXPECT_EQ(write(t), t.file_bytes) << share;
    EXPECT_LE(t.file_bytes, target) << share;
    // Close to it: no group could take a candidate of less KL and still fit.
    for (size_t g = 0; g < table_.groups.size(); ++g) {
      const size_t picked = t.choice.picks[g];
      for (size_t c = 0; c < 4; ++c) {
        if (table_.groups[g].candidates[c].kl < table_.groups[g].candidates[picked].kl) {
          EXPECT_GT(t.file_bytes - extra[g][picked] + extra[g][c], target) << g << " " << c;
        }
      }
    }
    // The written groups have the chosen types (after the row fallbacks).
    const GgufFile out = GgufFile::open(options_.output);
    for (size_t g = 0; g < table_.groups.size(); ++g)
      for (const std::string& name : table_.groups[g].tensors) {
        const GgufTensorInfo& written = *out.find_tensor(name);
        const Encoding chosen = table_.groups[g].candidates[t.choice.picks[g]].type;
        EXPECT_EQ(written.encoding, quant::fit_row(chosen, written.dims[0])) << name;
      }
  }
}

TEST_F(SizeTargetTest, TheSmallestFileIsTheLeastTargetAndBelowItSaysSo) {
  const uint64_t least = measured_size(std::vector<size_t>(table_.groups.size(), 0));
  const SizeTarget t = fit_to_size(options_, table_, least);
  EXPECT_EQ(write(t), least);
  try {
    fit_to_size(options_, table_, least - 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(e.message().find("smallest file the sensitivity table allows is " + std::to_string(least) + " bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SizeTargetTest, RefusesTablesOfAnotherModel) {
  const auto refused = [&](const SensitivityTable& table, const std::string& why) {
    try {
      fit_to_size(options_, table, 1u << 30);
      ADD_FAILURE() << "no error: " << why;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  SensitivityTable absent = table_;
  absent.groups[0].tensors.push_back("blk.9.attn_q.weight");
  refused(absent, "does not have");
  SensitivityTable bytes = table_;
  bytes.groups[1].candidates[2].bytes += 1;
  refused(bytes, "measured on another model");
  SensitivityTable norm = table_;
  norm.groups[0].tensors.push_back("blk.0.attn_norm.weight");
  refused(norm, "keeps as it is");
  SensitivityTable twice = table_;
  twice.groups[1].tensors.push_back(twice.groups[0].tensors[0]);
  refused(twice, "two groups");
}

TEST_F(SizeTargetTest, UnquantizedTypesTakeNoProfile) {
  options_.type = quant::find_quant_type("f16");
  EXPECT_THROW(
      try { fit_to_size(options_, table_, 1u << 30); } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        throw;
      },
      Error);
}

}  // namespace
}  // namespace synapse::calibrate
