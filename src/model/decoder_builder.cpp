#include "model/decoder_builder.h"

#include <cmath>

#include "synapse/error.h"

namespace synapse {

std::string block_tensor(uint32_t layer, const char* what) {
  return "blk." + std::to_string(layer) + "." + what;
}

DecoderGraphBuilder::DecoderGraphBuilder(const DenseFamily& family, const DenseHparams& hp,
                                         const TensorTable& tensors, const GraphBounds& bounds)
    : family_(family), hp_(hp), tensors_(tensors), b_(ir::Dim::symbolic("Tokens", 1, "chunk")) {
  b_.bind("chunk", bounds.chunk);
  b_.bind("max_ctx", bounds.max_ctx);
}

ir::ValueId DecoderGraphBuilder::embed() {
  const ir::ValueId ids = b_.add_input(ir::EntryKind::TokenIds);
  positions_ = b_.add_input(ir::EntryKind::Positions);
  rope_ = rope_attributes();
  b_.begin_region(ir::RegionKind::embedding());
  const ir::ValueId h = b_.embedding(token_embd(), ids);
  b_.end_region();
  return h;
}

ir::Graph DecoderGraphBuilder::finish(ir::ValueId h) && {
  b_.begin_region(ir::RegionKind::logits());
  const ir::ValueId normed = b_.rms_norm(h, weight("output_norm.weight", {embd()}), hp_.rms_eps);
  // Tied embeddings: without output.weight the logits reuse token_embd.
  const ir::TensorId output =
      tensors_.contains("output.weight") ? weight("output.weight", {hp_.n_vocab, embd()}) : token_embd();
  const ir::ValueId logits = b_.logits(normed, output);
  b_.end_region();
  b_.add_output(ir::OutputKind::Logits, logits);
  return std::move(b_).finish();
}

ir::TensorId DecoderGraphBuilder::weight(const std::string& name, const TensorShape& shape) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const ir::TensorId id = b_.add_weight(tensors_.require(name, shape));
  ids_.emplace(name, id);
  return id;
}

ir::TensorId DecoderGraphBuilder::view(ir::WeightDescriptor descriptor) {
  const std::string name = descriptor.name;
  const ir::TensorId id = b_.add_weight(std::move(descriptor));
  ids_.emplace(name, id);
  return id;
}

ir::Rope DecoderGraphBuilder::rope_attributes() {
  ir::Rope rope{hp_.rope_theta, family_.rope_layout, hp_.head_dim, hp_.rotary_dim, hp_.rope_scaling};
  if (family_.rope_freqs && tensors_.contains("rope_freqs.weight")) {
    if (!std::holds_alternative<ir::RopeNoScaling>(hp_.rope_scaling))
      throw Error(ErrorKind::Unsupported, "rope_freqs.weight together with metadata rope scaling",
                  Error::kNoOffset, "rope_freqs.weight");
    rope.scaling = ir::RopeLlama3Scaling{weight("rope_freqs.weight", {hp_.rotary_dim / 2})};
  }
  return rope;
}

// x @ W (+ bias when the family has q/k/v biases), W [width, n_embd].
ir::ValueId DecoderGraphBuilder::projection(uint32_t il, ir::ValueId x, const char* name, int64_t width,
                                            bool biased) {
  const std::string base = block_tensor(il, name);
  const ir::TensorId w = weight(base + ".weight", {width, embd()});
  std::optional<ir::TensorId> bias;
  if (biased) bias = weight(base + ".bias", {width});
  return b_.matmul(x, w, bias);
}

// qk-norm, then RoPE: what q and k go through before attention.
ir::ValueId DecoderGraphBuilder::position_encode(uint32_t il, ir::ValueId x, const char* norm_name,
                                                 int64_t width) {
  if (family_.qk_norm != QkNorm::None) {
    const int64_t group = family_.qk_norm == QkNorm::PerHead ? int64_t{hp_.head_dim} : width;
    x = b_.rms_norm(x, weight(block_tensor(il, norm_name), {group}), hp_.rms_eps);
  }
  return b_.rope(x, positions_, rope_);
}

ir::ValueId DecoderGraphBuilder::attention_block(uint32_t il, ir::ValueId h) {
  const ir::ValueType kv_state{ir::DType::F32,
                               {ir::Dim::symbolic("Context", 1, "max_ctx"), ir::Dim::fixed(kv_width())}};
  const ir::SlotId k_slot = b_.add_slot(block_tensor(il, "k"), kv_state);
  const ir::SlotId v_slot = b_.add_slot(block_tensor(il, "v"), kv_state);

  b_.begin_region(ir::RegionKind::attention(il));
  const ir::ValueId x = b_.rms_norm(h, weight(block_tensor(il, "attn_norm.weight"), {embd()}), hp_.rms_eps);
  const bool biased = family_.qkv_bias;
  const ir::ValueId q =
      position_encode(il, projection(il, x, "attn_q", q_width(), biased), "attn_q_norm.weight", q_width());
  const ir::ValueId k =
      position_encode(il, projection(il, x, "attn_k", kv_width(), biased), "attn_k_norm.weight", kv_width());
  const ir::ValueId v = projection(il, x, "attn_v", kv_width(), biased);
  const ir::ValueId k_all = b_.state_append(k_slot, k, positions_);
  const ir::ValueId v_all = b_.state_append(v_slot, v, positions_);
  const ir::CausalAttention attention{hp_.n_head, hp_.n_head_kv, hp_.head_dim,
                                      1.0f / std::sqrt(static_cast<float>(hp_.head_dim)), false};
  const ir::ValueId a = b_.attention(q, k_all, v_all, positions_, attention);
  const ir::ValueId out = b_.matmul(a, weight(block_tensor(il, "attn_output.weight"), {embd(), q_width()}));
  const ir::ValueId result = b_.add(h, out);
  b_.set_name(result, block_tensor(il, "attn_residual"));
  b_.end_region();
  return result;
}

ir::ValueId DecoderGraphBuilder::swiglu_ffn(ir::ValueId x, ir::TensorId gate, ir::TensorId up, ir::TensorId down) {
  const ir::ValueId g = b_.matmul(x, gate);  // separate statements: a fixed node order
  const ir::ValueId u = b_.matmul(x, up);
  return b_.matmul(b_.swiglu(g, u), down);
}

}  // namespace synapse
