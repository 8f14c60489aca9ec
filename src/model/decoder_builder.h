// The pieces every decoder graph shares, whatever its feed-forward block:
// entry inputs and the embedding region, the attention region of a layer
// (q/k/v, optional biases and q/k norm, RoPE, KV state, GQA), a SwiGLU
// feed-forward, and the final norm + logits region. The dense builder adds
// an MLP region per layer, the MoE builder a router, experts and a merge.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/builder.h"
#include "model/dense_builder.h"

namespace synapse {

// "blk.{layer}.{what}": llama.cpp's per-layer tensor names.
std::string block_tensor(uint32_t layer, const char* what);

class DecoderGraphBuilder {
 public:
  DecoderGraphBuilder(const DenseFamily& family, const DenseHparams& hp, const TensorTable& tensors,
                      const GraphBounds& bounds);

  // The entry inputs and the Embedding region; returns the hidden state.
  ir::ValueId embed();
  // Attention(il): returns h + attention(norm(h)).
  ir::ValueId attention_block(uint32_t il, ir::ValueId h);
  // The Logits region and the logits output; returns the verified graph.
  ir::Graph finish(ir::ValueId h) &&;

  // down(silu(x @ gate) * (x @ up)): the members go into the open region.
  ir::ValueId swiglu_ffn(ir::ValueId x, ir::TensorId gate, ir::TensorId up, ir::TensorId down);
  // The weight's id, registered on first use (so a tied table is one weight);
  // checked through TensorTable::require.
  ir::TensorId weight(const std::string& name, const TensorShape& shape);
  // A weight whose descriptor the caller made (a view into a tensor).
  ir::TensorId view(ir::WeightDescriptor descriptor);

  ir::GraphBuilder& graph() { return b_; }
  const DenseHparams& hparams() const { return hp_; }
  const TensorTable& tensors() const { return tensors_; }
  int64_t embd() const { return hp_.n_embd; }

 private:
  int64_t q_width() const { return int64_t{hp_.n_head} * hp_.head_dim; }
  int64_t kv_width() const { return int64_t{hp_.n_head_kv} * hp_.head_dim; }
  ir::TensorId token_embd() { return weight("token_embd.weight", {hp_.n_vocab, embd()}); }
  ir::Rope rope_attributes();
  ir::ValueId projection(uint32_t il, ir::ValueId x, const char* name, int64_t width, bool biased);
  ir::ValueId position_encode(uint32_t il, ir::ValueId x, const char* norm_name, int64_t width);

  const DenseFamily& family_;
  const DenseHparams& hp_;
  const TensorTable& tensors_;
  ir::GraphBuilder b_;
  ir::ValueId positions_;
  ir::Rope rope_{};
  std::map<std::string, ir::TensorId> ids_;
};

}  // namespace synapse
