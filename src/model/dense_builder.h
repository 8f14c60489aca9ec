// The one builder of dense decoder graphs (llama, qwen2, qwen3, llama2.c):
// hyperparameters and a family's features in, a verified region graph out.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "model/family_table.h"
#include "model/model.h"
#include "model/tensor_table.h"

namespace synapse {

// What a dense decoder's shape and numerics are, whatever file they came from.
struct DenseHparams {
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;    // may differ from n_embd / n_head (qwen3)
  uint32_t rotary_dim = 0;  // leading dims of each head that RoPE rotates
  uint32_t n_ff = 0;
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  float rms_eps = 0;
  float rope_theta = 0;
  // From metadata (none, linear or YaRN); replaced by Llama 3 scaling when
  // the file has rope_freqs.weight.
  ir::RopeScaling rope_scaling = ir::RopeNoScaling{};
};

// The bound values a session uses: "chunk" and "max_ctx" (options.max_ctx, or
// the training context capped at 4096). Throws InvalidValue for a zero chunk.
struct GraphBounds {
  int64_t chunk = 0;
  int64_t max_ctx = 0;
};
GraphBounds bounds_for(const LoadOptions& options, uint32_t n_ctx_train);

// Builds and verifies the graph. Every tensor is checked through
// TensorTable::require before use (MissingKey, InvalidValue, UnknownEncoding);
// a Llama 3 rope_freqs.weight together with metadata rope scaling is
// Unsupported.
ir::Graph build_dense_graph(const DenseFamily& family, const DenseHparams& hparams, const TensorTable& tensors,
                            const GraphBounds& bounds);

}  // namespace synapse
