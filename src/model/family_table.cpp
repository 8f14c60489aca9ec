#include "model/family_table.h"

#include "synapse/error.h"

namespace synapse {
namespace {

// Feature choices follow llama.cpp's graph builders (src/models/*.cpp and
// llama_model_rope_type): llama uses the interleaved ("norm") rope, the
// others NeoX; qwen2* add q/k/v biases, qwen3* normalize q and k per head,
// olmoe over the full projection width; only llama reads the Llama 3
// rope_freqs tensor. Expert gating: Mixtral (llama with experts) and qwen3moe
// renormalise the top k, olmoe and qwen2moe keep the softmax weights.
// clang-format off
constexpr DenseFamily kFamilies[] = {
//  arch        rope_layout            qkv_bias qk_norm            rope_freqs always_experts {normalize_top_k shared_expert}
  {"llama",    ir::RopeLayout::Normal, false,   QkNorm::None,      true,      false,         {true,           false}},
  {"qwen2",    ir::RopeLayout::NeoX,   true,    QkNorm::None,      false,     false,         {false,          false}},
  {"qwen3",    ir::RopeLayout::NeoX,   false,   QkNorm::PerHead,   false,     false,         {false,          false}},
  {"olmoe",    ir::RopeLayout::NeoX,   false,   QkNorm::FullWidth, false,     true,          {false,          false}},
  {"qwen2moe", ir::RopeLayout::NeoX,   true,    QkNorm::None,      false,     true,          {false,          true}},
  {"qwen3moe", ir::RopeLayout::NeoX,   false,   QkNorm::PerHead,   false,     true,          {true,           false}},
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
