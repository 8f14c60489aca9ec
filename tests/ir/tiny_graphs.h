// Small hand-built graphs for the IR tests: a dense one-layer model and a
// one-layer mixture of two experts, with the knobs the tests turn.
#pragma once

#include <optional>
#include <string>

#include "encoding/encoding.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/verify.h"

namespace synapse::ir::testing {

struct DenseConfig {
  float eps = 1e-5f;
  float theta = 10000.0f;
  uint32_t heads = 2;
  uint32_t kv_heads = 1;
  uint32_t head_dim = 4;  // d_model = heads * head_dim
  int64_t ffn = 16;
  int64_t vocab = 10;
  int64_t chunk = 4;
  int64_t max_ctx = 32;
  Encoding down_encoding = Encoding::F32;  // of ffn_down
  bool up_before_gate = false;
  bool attention_accepts_holes = false;
};

// Embedding -> Attention(0) -> Mlp(0) -> Logits. Values are named: ids, pos,
// h0 (embedding), attn_norm, q, k, v, q_rope, k_rope, k_cache, v_cache, attn,
// attn_out, h1, ffn_norm, gate, up, swiglu, down, h2, out_norm, logits.
Graph build_dense(const DenseConfig& config = {});

struct MoeConfig {
  TopKRoute route{1, TiePolicy::LowestIndex, false, std::nullopt, RouteScope::PerToken};
};

// Embedding -> Router(0) -> Expert(0,0), Expert(0,1) -> Merge(0) -> Logits.
// Values: ids, pos, h0, router_norm, scores, probs, gates, e0_up, e0_act,
// e0_out (likewise e1_*), merged, h1, out_norm, logits.
Graph build_moe(const MoeConfig& config = {});

ValueId value_named(const Graph& graph, const std::string& name);
NodeId node_named(const Graph& graph, const std::string& name);
// The node that defines the value so named.
Node& node(Graph& graph, const std::string& value_name);
RegionId region_of_kind(const Graph& graph, const RegionKind& kind);
TensorId weight_named(const Graph& graph, const std::string& name);

// The rule verify() reports, or nullopt when the graph verifies.
std::optional<VerifyError> verify_error(const Graph& graph, const VerifyOptions& options = {});

}  // namespace synapse::ir::testing
