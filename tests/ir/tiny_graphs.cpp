#include "ir/tiny_graphs.h"

#include <stdexcept>

namespace synapse::ir::testing {
namespace {

// A builder over one source file whose weights follow each other, F32 unless
// told otherwise.
class TinyModel {
 public:
  explicit TinyModel(int64_t chunk, int64_t max_ctx) : b(Dim::symbolic("Tokens", 1, "chunk")) {
    b.bind("chunk", chunk);
    b.bind("max_ctx", max_ctx);
    ids = named(b.add_input(EntryKind::TokenIds), "ids");
    pos = named(b.add_input(EntryKind::Positions), "pos");
  }

  TensorId weight(const std::string& name, std::vector<int64_t> shape, Encoding encoding = Encoding::F32) {
    uint64_t length = 4;
    for (int64_t extent : shape) length *= static_cast<uint64_t>(extent);
    WeightDescriptor descriptor{name, 0, next_offset_, length, encoding, std::move(shape)};
    next_offset_ += length;
    return b.add_weight(std::move(descriptor));
  }
  ValueId named(ValueId value, const std::string& name) {
    b.set_name(value, name);
    return value;
  }
  ValueId embedding_region(int64_t vocab, int64_t width) {
    const TensorId table = weight("token_embd", {vocab, width});
    b.begin_region(RegionKind::embedding());
    const ValueId h0 = named(b.embedding(table, ids), "h0");
    b.end_region();
    return h0;
  }
  void logits_region(ValueId h, float eps, int64_t vocab, int64_t width) {
    const TensorId norm = weight("output_norm", {width});
    const TensorId output = weight("output", {vocab, width});
    b.begin_region(RegionKind::logits());
    const ValueId logits = named(b.logits(named(b.rms_norm(h, norm, eps), "out_norm"), output), "logits");
    b.end_region();
    b.add_output(OutputKind::Logits, logits);
  }

  GraphBuilder b;
  ValueId ids, pos;

 private:
  uint64_t next_offset_ = 0;
};

}  // namespace

Graph build_dense(const DenseConfig& c) {
  TinyModel m(c.chunk, c.max_ctx);
  GraphBuilder& b = m.b;
  const int64_t width = int64_t{c.heads} * c.head_dim;
  const int64_t kv_width = int64_t{c.kv_heads} * c.head_dim;
  const ValueId h0 = m.embedding_region(c.vocab, width);

  const TensorId attn_norm = m.weight("blk.0.attn_norm", {width});
  const TensorId wq = m.weight("blk.0.attn_q", {width, width});
  const TensorId wk = m.weight("blk.0.attn_k", {kv_width, width});
  const TensorId wv = m.weight("blk.0.attn_v", {kv_width, width});
  const TensorId wo = m.weight("blk.0.attn_output", {width, width});
  const Dim context = Dim::symbolic("Context", 1, "max_ctx");
  const SlotId k_slot = b.add_slot("blk.0.k", ValueType{DType::F16, {context, Dim::fixed(kv_width)}});
  const SlotId v_slot = b.add_slot("blk.0.v", ValueType{DType::F16, {context, Dim::fixed(kv_width)}});
  const Rope rope{c.theta, RopeLayout::NeoX, c.head_dim, c.head_dim, RopeNoScaling{}};
  const CausalAttention attention{c.heads, c.kv_heads, c.head_dim, 0.5f, c.attention_accepts_holes};
  b.begin_region(RegionKind::attention(0));
  const ValueId x = m.named(b.rms_norm(h0, attn_norm, c.eps), "attn_norm");
  const ValueId q = m.named(b.matmul(x, wq), "q");
  const ValueId k = m.named(b.matmul(x, wk), "k");
  const ValueId v = m.named(b.matmul(x, wv), "v");
  const ValueId q_rope = m.named(b.rope(q, m.pos, rope), "q_rope");
  const ValueId k_rope = m.named(b.rope(k, m.pos, rope), "k_rope");
  const ValueId k_cache = m.named(b.state_append(k_slot, k_rope, m.pos), "k_cache");
  const ValueId v_cache = m.named(b.state_append(v_slot, v, m.pos), "v_cache");
  const ValueId attn = m.named(b.attention(q_rope, k_cache, v_cache, m.pos, attention), "attn");
  const ValueId h1 = m.named(b.add(h0, m.named(b.matmul(attn, wo), "attn_out")), "h1");
  b.end_region();

  const TensorId ffn_norm = m.weight("blk.0.ffn_norm", {width});
  const TensorId w_gate = m.weight("blk.0.ffn_gate", {c.ffn, width});
  const TensorId w_up = m.weight("blk.0.ffn_up", {c.ffn, width});
  const TensorId w_down = m.weight("blk.0.ffn_down", {width, c.ffn}, c.down_encoding);
  b.begin_region(RegionKind::mlp(0));
  const ValueId y = m.named(b.rms_norm(h1, ffn_norm, c.eps), "ffn_norm");
  ValueId gate, up;
  if (c.up_before_gate) {
    up = m.named(b.matmul(y, w_up), "up");
    gate = m.named(b.matmul(y, w_gate), "gate");
  } else {
    gate = m.named(b.matmul(y, w_gate), "gate");
    up = m.named(b.matmul(y, w_up), "up");
  }
  const ValueId down = m.named(b.matmul(m.named(b.swiglu(gate, up), "swiglu"), w_down), "down");
  const ValueId h2 = m.named(b.add(h1, down), "h2");
  b.end_region();

  m.logits_region(h2, c.eps, c.vocab, width);
  return std::move(b).finish_unverified();
}

Graph build_moe(const MoeConfig& c) {
  constexpr int64_t kWidth = 8, kFfn = 16, kVocab = 10, kExperts = 2;
  constexpr float kEps = 1e-6f;
  TinyModel m(4, 32);
  GraphBuilder& b = m.b;
  const ValueId h0 = m.embedding_region(kVocab, kWidth);

  const TensorId router_norm = m.weight("blk.0.ffn_norm", {kWidth});
  const TensorId router = m.weight("blk.0.ffn_gate_inp", {kExperts, kWidth});
  b.begin_region(RegionKind::router(0));
  const ValueId x = m.named(b.rms_norm(h0, router_norm, kEps), "router_norm");
  const ValueId probs = m.named(b.softmax(m.named(b.matmul(x, router), "scores")), "probs");
  const ValueId gates = m.named(b.top_k_route(probs, c.route), "gates");
  b.end_region();

  std::vector<ValueId> merged_operands{gates};
  for (uint32_t e = 0; e < kExperts; ++e) {
    const std::string prefix = std::string("e").append(std::to_string(e)).append("_");
    const TensorId up = m.weight("blk.0.ffn_up." + std::to_string(e), {kFfn, kWidth});
    const TensorId down = m.weight("blk.0.ffn_down." + std::to_string(e), {kWidth, kFfn});
    b.begin_region(RegionKind::expert_of(0, e), RegionActivation::routed(gates, e));
    const ValueId act = m.named(b.silu(m.named(b.matmul(x, up), prefix + "up")), prefix + "act");
    merged_operands.push_back(m.named(b.matmul(act, down), prefix + "out"));
    b.end_region();
  }

  b.begin_region(RegionKind::merge(0));
  const ValueId merged = m.named(b.merge(MergeMode::GatedSum, merged_operands), "merged");
  const ValueId h1 = m.named(b.add(h0, merged), "h1");
  b.end_region();

  m.logits_region(h1, kEps, kVocab, kWidth);
  return std::move(b).finish_unverified();
}

ValueId value_named(const Graph& graph, const std::string& name) {
  for (uint32_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].name == name) return ValueId{v};
  throw std::invalid_argument("no value named " + name);
}

NodeId node_named(const Graph& graph, const std::string& name) {
  return graph.values[value_named(graph, name).index].producer;
}

Node& node(Graph& graph, const std::string& value_name) {
  return graph.nodes[node_named(graph, value_name).index];
}

RegionId region_of_kind(const Graph& graph, const RegionKind& kind) {
  for (uint32_t r = 0; r < graph.regions.size(); ++r)
    if (graph.regions[r].kind == kind) return RegionId{r};
  throw std::invalid_argument("no region " + to_string(kind));
}

TensorId weight_named(const Graph& graph, const std::string& name) {
  for (uint32_t w = 0; w < graph.weights.size(); ++w)
    if (graph.weights[w].name == name) return TensorId{w};
  throw std::invalid_argument("no weight named " + name);
}

std::optional<VerifyError> verify_error(const Graph& graph, const VerifyOptions& options) {
  try {
    verify(graph, options);
    return std::nullopt;
  } catch (const VerifyFailure& failure) {
    return failure.error();
  }
}

}  // namespace synapse::ir::testing
