// What llama.cpp's quantizer reads from a tensor's name and shape
// (src/llama-quant.cpp): the broad category that picks its place in a type
// mix, whether it may be quantized at all, and its block index.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace synapse::quant {

enum class TensorCategory {
  TokenEmbd,  // token_embd.weight, per_layer_token_embd.weight
  AttnQ,
  AttnK,
  AttnV,
  AttnQkv,
  AttnKvB,
  AttnOutput,
  FfnUp,  // names containing ffn_up (ffn_up_exps, ffn_up_shexp too); likewise gate, down
  FfnGate,
  FfnDown,
  Output,  // output.weight
  Other,
};

TensorCategory tensor_category(std::string_view name);

// attn_v-like tensors (attn_v, attn_qkv, attn_kv_b) share attn_v's rules and
// its counter.
bool is_attn_v_like(TensorCategory c);

// Dimensions not counting trailing ones, at least 1 (ggml_n_dims).
int significant_dims(std::span<const uint64_t> dims);

// llama.cpp's tensor_allows_quantization with its default parameters: 2-D and
// 3-D weights, except norms, routers, position and token-type embeddings
// and the small special tensors of some architectures.
bool allows_quantization(std::string_view name, std::span<const uint64_t> dims);

// N of a name starting "blk.N." (as sscanf "blk.%d."), else -1.
int block_index(std::string_view name);

}  // namespace synapse::quant
