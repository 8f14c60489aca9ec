// Hugging Face folders: each family's synthetic model written as an HF
// folder (safetensors under transformers' names, HF's q/k layout, experts
// apart) runs bit for bit like the GGUF it was written from and like the
// GGUF `convert` makes of it; hostile folders fail with typed errors.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "convert/hf_to_gguf.h"
#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "format/gguf_reader.h"
#include "format/safetensors.h"
#include "kernels/cpu/cpu_target.h"
#include "model/hf_import.h"
#include "model/model.h"
#include "support/hf_folder_writer.h"
#include "support/temp_dir.h"
#include "synapse/error.h"
#include "synth/synth.h"

namespace synapse {
namespace {

const std::vector<int32_t> kTokens = {1, 5, 9, 2, 7, 3, 11, 4, 8, 6};

std::vector<float> logits_of(const Model& model) {
  exec::SessionOptions options;
  options.kernels = exec::cpu_kernel_registry({1, cpu::best_cpu_target()});
  options.all_logits = true;
  exec::Session session(model, options);
  return session.eval_all(kTokens);
}

// The tiny preset of `arch`, or a real preset's shape cut to one layer and
// a 1024-token vocabulary.
std::string synth_file(const test::TempDir& dir, const std::string& arch, const std::string& type,
                       const std::string& preset = "") {
  SynthOptions options;
  options.arch = arch;
  options.type = type;
  options.seed = 11;
  if (!preset.empty()) {
    options.preset = preset;
    options.n_layer = 1;
    options.n_vocab = 1024;
  }
  const std::string path = dir.file(arch + "-" + type + ".gguf");
  synth_model(options, path);
  return path;
}

struct RoundTrip {
  const char* arch;
  const char* type;
  int shards;
  const char* preset = "";
};

class HfRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

// GGUF -> HF folder -> run, and HF folder -> convert -> GGUF -> run, both
// equal the original GGUF's logits bit for bit.
TEST_P(HfRoundTrip, FolderAndItsConversionRunBitForBitLikeTheGguf) {
  const RoundTrip p = GetParam();
  const test::TempDir dir;
  const std::string gguf = synth_file(dir, p.arch, p.type, p.preset);
  const std::string folder = dir.file("hf");
  test::write_hf_folder(gguf, folder, {.shards = p.shards});

  const std::vector<float> expected = logits_of(load_model(gguf));
  EXPECT_EQ(logits_of(load_model(folder)), expected) << "HF folder";

  convert::ConvertOptions options;
  options.input = folder;
  options.output = dir.file("converted.gguf");
  options.tokenizer = gguf;  // the synthetic vocabulary
  convert::convert_hf_to_gguf(options);
  EXPECT_EQ(logits_of(load_model(options.output)), expected) << "converted GGUF";
  const GgufFile converted = GgufFile::open(options.output);
  const GgufFile original = GgufFile::open(gguf);
  EXPECT_EQ(converted.tensors().size(), original.tensors().size());
  EXPECT_EQ(converted.metadata().get_array("tokenizer.ggml.tokens").size(),
            original.metadata().get_array("tokenizer.ggml.tokens").size());
}

INSTANTIATE_TEST_SUITE_P(Families, HfRoundTrip,
                         ::testing::Values(RoundTrip{"llama", "f32", 1}, RoundTrip{"llama", "bf16", 3},
                                           RoundTrip{"qwen2", "f16", 1}, RoundTrip{"qwen3", "f32", 2},
                                           RoundTrip{"mixtral", "f32", 1}, RoundTrip{"olmoe", "bf16", 1},
                                           RoundTrip{"qwen2moe", "f32", 2}, RoundTrip{"qwen3moe", "f16", 1},
                                           // Real shapes: GQA ratios, head widths, Llama 3.2's rope factors.
                                           RoundTrip{"qwen2", "f16", 1, "qwen2.5-0.5b"},
                                           RoundTrip{"llama", "bf16", 2, "llama-3.2-1b"},
                                           RoundTrip{"llama", "f32", 1, "smollm2-135m"}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.arch) + "_" + info.param.type + "_" +
                                              std::to_string(info.param.shards) + "shard";
                           for (char c : std::string(info.param.preset)) name += std::isalnum(c) ? c : '_';
                           return name;
                         });

// Weights other than q and k are read in place from the mapped safetensors.
TEST(HfImport, WeightsAreReadInPlaceExceptPermutedQAndK) {
  const test::TempDir dir;
  const std::string folder = dir.file("hf");
  test::write_hf_folder(synth_file(dir, "llama", "f32"), folder);
  const Model model = load_model(folder);
  for (const ir::WeightDescriptor& w : model.graph.weights) {
    const bool in_place = model.files[w.file]->path() == folder + "/model.safetensors";
    const bool qk = w.name.ends_with("attn_q.weight") || w.name.ends_with("attn_k.weight");
    EXPECT_EQ(in_place, !qk && w.name != "rope_freqs.weight") << w.name;
  }
}

ErrorKind import_error_kind(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "loaded " << path;
  return ErrorKind::Io;
}

class HfHostileFolder : public ::testing::Test {
 protected:
  void SetUp() override { test::write_hf_folder(synth_file(dir_, "qwen2", "f32"), folder_, {.shards = 2}); }
  nlohmann::json index() const {
    return nlohmann::json::parse(std::ifstream(folder_ + "/model.safetensors.index.json"));
  }
  void write_index(const nlohmann::json& j) const {
    std::ofstream(folder_ + "/model.safetensors.index.json") << j.dump();
  }
  void edit_config(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json c = nlohmann::json::parse(std::ifstream(folder_ + "/config.json"));
    edit(c);
    std::ofstream(folder_ + "/config.json") << c.dump();
  }

  test::TempDir dir_;
  std::string folder_ = dir_.file("hf");
};

TEST_F(HfHostileFolder, ShardMissingFromTheFolderIsAnIoError) {
  std::filesystem::remove(folder_ + "/model-00002-of-00002.safetensors");
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::Io);
}

TEST_F(HfHostileFolder, TensorTheIndexPlacesInTheWrongShardIsMissing) {
  nlohmann::json j = index();
  auto& map = j["weight_map"];
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it.value() == "model-00001-of-00002.safetensors") {
      it.value() = "model-00002-of-00002.safetensors";
      break;
    }
  }
  write_index(j);
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::MissingKey);
}

TEST_F(HfHostileFolder, IndexNamingAFileOutsideTheFolderIsRefused) {
  nlohmann::json j = index();
  j["weight_map"].begin().value() = "../model-00001-of-00002.safetensors";
  write_index(j);
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::InvalidValue);
}

TEST_F(HfHostileFolder, UnknownModelTypeIsUnsupported) {
  edit_config([](nlohmann::json& c) { c["model_type"] = "gpt_neox"; });
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::Unsupported);
}

TEST_F(HfHostileFolder, ConfigShapeThatDisagreesWithTheTensorsIsInvalid) {
  edit_config([](nlohmann::json& c) { c["intermediate_size"] = c["intermediate_size"].get<int>() + 2; });
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::InvalidValue);
}

TEST_F(HfHostileFolder, MissingConfigFieldIsAMissingKey) {
  edit_config([](nlohmann::json& c) { c.erase("num_hidden_layers"); });
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::MissingKey);
}

TEST_F(HfHostileFolder, ConfigThatIsNotJsonIsInvalid) {
  std::ofstream(folder_ + "/config.json") << "{\"model_type\": ";
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::InvalidValue);
}

TEST_F(HfHostileFolder, TensorWithoutAGgufNameIsUnsupported) {
  std::filesystem::remove(folder_ + "/model.safetensors.index.json");
  std::filesystem::remove(folder_ + "/model-00002-of-00002.safetensors");
  const std::vector<float> v(4, 1.0f);
  const SafetensorsEntry extra{"model.vision_tower.weight", "F32", {4},
                               {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)}};
  write_safetensors(folder_ + "/model-00002-of-00002.safetensors", std::span(&extra, 1));
  std::filesystem::rename(folder_ + "/model-00002-of-00002.safetensors", folder_ + "/extra.safetensors");
  // Two safetensors files and no index: ambiguous.
  EXPECT_EQ(import_error_kind(folder_), ErrorKind::Usage);
  EXPECT_EQ(import_error_kind(folder_ + "/extra.safetensors"), ErrorKind::Unsupported);
}

TEST_F(HfHostileFolder, IntegerWeightIsAnUnknownEncoding) {
  std::filesystem::remove(folder_ + "/model.safetensors.index.json");
  const std::vector<int32_t> v(4, 1);
  const SafetensorsEntry norm{"model.norm.weight", "I32", {4},
                              {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(int32_t)}};
  write_safetensors(folder_ + "/int.safetensors", std::span(&norm, 1));
  EXPECT_EQ(import_error_kind(folder_ + "/int.safetensors"), ErrorKind::UnknownEncoding);
}

TEST_F(HfHostileFolder, ConvertWithoutATokenizerNamesTheFlag) {
  convert::ConvertOptions options;
  options.input = folder_;
  options.output = dir_.file("out.gguf");
  try {
    convert::convert_hf_to_gguf(options);
    FAIL() << "converted without a tokenizer";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingKey);
    EXPECT_NE(std::string(e.what()).find("--tokenizer"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(options.output));
}

}  // namespace
}  // namespace synapse
