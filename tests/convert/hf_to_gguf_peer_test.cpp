// What `synapse convert` writes from a Hugging Face folder, llama.cpp runs as
// Synapse does: each family's tiny synthetic model, written as an HF folder
// and converted back, gives llama.cpp's 64 greedy tokens from three prompts
// in Synapse, logits within 2e-3 (summation order; see support/peer_greedy.h).
#include <gtest/gtest.h>

#include "convert/hf_to_gguf.h"
#include "support/hf_folder_writer.h"
#include "support/peer_greedy.h"

namespace synapse {
namespace {

class ConvertedHfFolder : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvertedHfFolder, LlamaCppRunsItAsSynapseDoes) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const test::TempDir dir;
  SynthOptions o;
  o.arch = GetParam();
  o.seed = 11;
  const std::string gguf = dir.file("synth.gguf");
  synth_model(o, gguf);
  test::write_hf_folder(gguf, dir.file("hf"));
  convert::ConvertOptions options;
  options.input = dir.file("hf");
  options.output = dir.file("converted.gguf");
  options.tokenizer = gguf;
  convert::convert_hf_to_gguf(options);
  test::expect_model_greedy_equals_peer(options.output, std::string("converted ") + GetParam(), 2e-3f);
}

INSTANTIATE_TEST_SUITE_P(Families, ConvertedHfFolder,
                         ::testing::Values("llama", "qwen2", "qwen3", "mixtral", "olmoe", "qwen2moe", "qwen3moe"));

}  // namespace
}  // namespace synapse
