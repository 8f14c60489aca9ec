#include "model/dense_builder.h"

#include <algorithm>

#include "model/decoder_builder.h"
#include "synapse/error.h"

namespace synapse {
namespace {

// Dense layers: attention, then one SwiGLU MLP region.
ir::ValueId mlp_block(DecoderGraphBuilder& d, uint32_t il, ir::ValueId h) {
  const int64_t ff = d.hparams().n_ff;
  ir::GraphBuilder& b = d.graph();
  b.begin_region(ir::RegionKind::mlp(il));
  const ir::ValueId x =
      b.rms_norm(h, d.weight(block_tensor(il, "ffn_norm.weight"), {d.embd()}), d.hparams().rms_eps);
  const ir::TensorId gate = d.weight(block_tensor(il, "ffn_gate.weight"), {ff, d.embd()});
  const ir::TensorId up = d.weight(block_tensor(il, "ffn_up.weight"), {ff, d.embd()});
  const ir::TensorId down_w = d.weight(block_tensor(il, "ffn_down.weight"), {d.embd(), ff});
  const ir::ValueId down = d.swiglu_ffn(x, gate, up, down_w);
  const ir::ValueId result = b.add(h, down);
  b.set_name(result, block_tensor(il, "ffn_residual"));
  b.end_region();
  return result;
}

}  // namespace

GraphBounds bounds_for(const LoadOptions& options, uint32_t n_ctx_train) {
  if (options.chunk == 0) throw Error(ErrorKind::InvalidValue, "chunk must be at least 1 token");
  const uint32_t max_ctx = options.max_ctx ? options.max_ctx : std::min<uint32_t>(n_ctx_train, kDefaultMaxCtx);
  if (max_ctx == 0) throw Error(ErrorKind::InvalidValue, "max_ctx must be at least 1 token");
  return {options.chunk, max_ctx};
}

ir::Graph build_dense_graph(const DenseFamily& family, const DenseHparams& hparams, const TensorTable& tensors,
                            const GraphBounds& bounds) {
  DecoderGraphBuilder d(family, hparams, tensors, bounds);
  ir::ValueId h = d.embed();
  for (uint32_t il = 0; il < hparams.n_layer; ++il) h = mlp_block(d, il, d.attention_block(il, h));
  return std::move(d).finish(h);
}

}  // namespace synapse
