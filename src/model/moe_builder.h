// Mixture-of-experts decoder graphs (OLMoE, Mixtral, Qwen2-MoE, Qwen3-MoE):
// per layer an Attention region, a Router region (norm, router logits,
// softmax, TopKRoute), one Expert region per expert, routed by the router's
// gate column (RouteSlot, ModelRouted, OutputsAbsent), an optional shared
// expert (an always-on Mlp region), and a Merge region that sums the gated
// expert outputs into the residual. Follows llama.cpp's build_moe_ffn with
// softmax gating and SiLU-gated experts.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "model/dense_builder.h"

namespace synapse {

struct MoeHparams {
  uint32_t n_expert = 0;
  uint32_t n_expert_used = 0;  // k
  uint32_t n_ff_expert = 0;    // width of one routed expert
  uint32_t n_ff_shared = 0;    // width of the shared expert (qwen2moe)
};

// Expert e of a merged expert tensor (ggml's [n_embd, n_ff, n_expert], here
// [n_expert, rows, cols]): a descriptor of its contiguous slice of the same
// file bytes, shape [rows, cols], named "NAME[e]". Nothing is copied.
// Throws InvalidValue when the tensor is not rank 3 or its bytes do not
// split evenly among the experts.
ir::WeightDescriptor expert_view(const ir::WeightDescriptor& merged, uint32_t expert);

// A weight's name split into its file tensor and expert: "NAME[e]" (an
// expert_view) is expert e of NAME; any other name is expert 0 of itself.
struct ExpertViewName {
  std::string tensor;
  uint32_t expert = 0;
};
ExpertViewName split_expert_view(const std::string& name);

// Builds and verifies the graph; tensors are checked as in build_dense_graph
// (merged expert tensors must be [n_expert, n_ff_expert, n_embd] and
// [n_expert, n_embd, n_ff_expert]).
ir::Graph build_moe_graph(const DenseFamily& family, const DenseHparams& hparams, const MoeHparams& moe,
                          const TensorTable& tensors, const GraphBounds& bounds);

}  // namespace synapse
