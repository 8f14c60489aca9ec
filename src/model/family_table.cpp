#include "model/family_table.h"

#include "synapse/error.h"

namespace synapse {
namespace {

// Feature choices follow llama.cpp's graph builders (src/llama-model.cpp):
// llama uses the interleaved ("norm") rope, qwen2/qwen3 NeoX; qwen2 adds
// q/k/v biases, qwen3 normalizes q and k per head instead; only llama reads
// the Llama 3 rope_freqs tensor.
// clang-format off
constexpr DenseFamily kFamilies[] = {
//  arch     rope_layout            qkv_bias qk_norm rope_freqs
  {"llama", ir::RopeLayout::Normal, false,   false,  true},
  {"qwen2", ir::RopeLayout::NeoX,   true,    false,  false},
  {"qwen3", ir::RopeLayout::NeoX,   false,   true,   false},
};
// clang-format on

}  // namespace

const DenseFamily& find_family(const std::string& arch) {
  std::string supported;
  for (const DenseFamily& family : kFamilies) {
    if (arch == family.arch) return family;
    supported += (supported.empty() ? "" : ", ") + std::string(family.arch);
  }
  throw Error(ErrorKind::Unsupported, "architecture '" + arch + "' is not supported (supported: " + supported + ")",
              Error::kNoOffset, "general.architecture");
}

const DenseFamily& llama_family() { return kFamilies[0]; }

}  // namespace synapse
