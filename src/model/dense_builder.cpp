#include "model/dense_builder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ir/builder.h"
#include "synapse/error.h"

namespace synapse {
namespace {

std::string block(uint32_t layer, const char* what) { return "blk." + std::to_string(layer) + "." + what; }

class DenseGraphBuilder {
 public:
  DenseGraphBuilder(const DenseFamily& family, const DenseHparams& hp, const TensorTable& tensors,
                    const GraphBounds& bounds)
      : family_(family), hp_(hp), tensors_(tensors), b_(ir::Dim::symbolic("Tokens", 1, "chunk")) {
    b_.bind("chunk", bounds.chunk);
    b_.bind("max_ctx", bounds.max_ctx);
  }

  ir::Graph build() && {
    const ir::ValueId ids = b_.add_input(ir::EntryKind::TokenIds);
    positions_ = b_.add_input(ir::EntryKind::Positions);
    rope_ = rope_attributes();

    b_.begin_region(ir::RegionKind::embedding());
    ir::ValueId h = b_.embedding(token_embd(), ids);
    b_.end_region();

    for (uint32_t il = 0; il < hp_.n_layer; ++il) {
      h = attention_block(il, h);
      h = mlp_block(il, h);
    }

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

 private:
  int64_t embd() const { return hp_.n_embd; }
  int64_t q_width() const { return int64_t{hp_.n_head} * hp_.head_dim; }
  int64_t kv_width() const { return int64_t{hp_.n_head_kv} * hp_.head_dim; }

  // The weight's id, registered on first use (so a tied table is one weight).
  ir::TensorId weight(const std::string& name, const TensorShape& shape) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const ir::TensorId id = b_.add_weight(tensors_.require(name, shape));
    ids_.emplace(name, id);
    return id;
  }
  ir::TensorId token_embd() { return weight("token_embd.weight", {hp_.n_vocab, embd()}); }

  ir::Rope rope_attributes() {
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
  ir::ValueId projection(uint32_t il, ir::ValueId x, const char* name, int64_t width, bool biased) {
    const std::string base = block(il, name);
    const ir::TensorId w = weight(base + ".weight", {width, embd()});
    std::optional<ir::TensorId> bias;
    if (biased) bias = weight(base + ".bias", {width});
    return b_.matmul(x, w, bias);
  }

  // qk-norm, then RoPE: what q and k go through before attention.
  ir::ValueId position_encode(uint32_t il, ir::ValueId x, const char* norm_name) {
    if (family_.qk_norm) x = b_.rms_norm(x, weight(block(il, norm_name), {hp_.head_dim}), hp_.rms_eps);
    return b_.rope(x, positions_, rope_);
  }

  ir::ValueId attention_block(uint32_t il, ir::ValueId h) {
    const ir::ValueType kv_state{ir::DType::F32,
                                 {ir::Dim::symbolic("Context", 1, "max_ctx"), ir::Dim::fixed(kv_width())}};
    const ir::SlotId k_slot = b_.add_slot(block(il, "k"), kv_state);
    const ir::SlotId v_slot = b_.add_slot(block(il, "v"), kv_state);

    b_.begin_region(ir::RegionKind::attention(il));
    const ir::ValueId x = b_.rms_norm(h, weight(block(il, "attn_norm.weight"), {embd()}), hp_.rms_eps);
    const bool biased = family_.qkv_bias;
    const ir::ValueId q = position_encode(il, projection(il, x, "attn_q", q_width(), biased), "attn_q_norm.weight");
    const ir::ValueId k = position_encode(il, projection(il, x, "attn_k", kv_width(), biased), "attn_k_norm.weight");
    const ir::ValueId v = projection(il, x, "attn_v", kv_width(), biased);
    const ir::ValueId k_all = b_.state_append(k_slot, k, positions_);
    const ir::ValueId v_all = b_.state_append(v_slot, v, positions_);
    const ir::CausalAttention attention{hp_.n_head, hp_.n_head_kv, hp_.head_dim,
                                        1.0f / std::sqrt(static_cast<float>(hp_.head_dim)), false};
    const ir::ValueId a = b_.attention(q, k_all, v_all, positions_, attention);
    const ir::ValueId out = b_.matmul(a, weight(block(il, "attn_output.weight"), {embd(), q_width()}));
    const ir::ValueId result = b_.add(h, out);
    b_.set_name(result, block(il, "attn_residual"));
    b_.end_region();
    return result;
  }

  ir::ValueId mlp_block(uint32_t il, ir::ValueId h) {
    const int64_t ff = hp_.n_ff;
    b_.begin_region(ir::RegionKind::mlp(il));
    const ir::ValueId x = b_.rms_norm(h, weight(block(il, "ffn_norm.weight"), {embd()}), hp_.rms_eps);
    const ir::ValueId gate = b_.matmul(x, weight(block(il, "ffn_gate.weight"), {ff, embd()}));
    const ir::ValueId up = b_.matmul(x, weight(block(il, "ffn_up.weight"), {ff, embd()}));
    const ir::ValueId down = b_.matmul(b_.swiglu(gate, up), weight(block(il, "ffn_down.weight"), {embd(), ff}));
    const ir::ValueId result = b_.add(h, down);
    b_.set_name(result, block(il, "ffn_residual"));
    b_.end_region();
    return result;
  }

  const DenseFamily& family_;
  const DenseHparams& hp_;
  const TensorTable& tensors_;
  ir::GraphBuilder b_;
  ir::ValueId positions_;
  ir::Rope rope_{};
  std::map<std::string, ir::TensorId> ids_;
};

}  // namespace

GraphBounds bounds_for(const LoadOptions& options, uint32_t n_ctx_train) {
  if (options.chunk == 0) throw Error(ErrorKind::InvalidValue, "chunk must be at least 1 token");
  const uint32_t max_ctx = options.max_ctx ? options.max_ctx : std::min<uint32_t>(n_ctx_train, 4096);
  if (max_ctx == 0) throw Error(ErrorKind::InvalidValue, "max_ctx must be at least 1 token");
  return {options.chunk, max_ctx};
}

ir::Graph build_dense_graph(const DenseFamily& family, const DenseHparams& hparams, const TensorTable& tensors,
                            const GraphBounds& bounds) {
  return DenseGraphBuilder(family, hparams, tensors, bounds).build();
}

}  // namespace synapse
