#include "ir/fingerprint.h"

#include <bit>

#include "ir/overloaded.h"

namespace synapse::ir {
namespace {

// Bump when the encoding below changes meaning.
constexpr std::string_view kEncodingVersion = "synapse.ir.fingerprint.v1";

class CanonicalEncoder {
 public:
  Sha256Digest encode(const Graph& graph) {
    text(kEncodingVersion);
    count(graph.values.size());
    for (const Value& value : graph.values) type(value.type);
    count(graph.weights.size());
    for (const WeightDescriptor& weight : graph.weights) {
      u32(static_cast<uint32_t>(weight.encoding));  // the ggml type id
      count(weight.shape.size());
      for (int64_t extent : weight.shape) u64(static_cast<uint64_t>(extent));
    }
    count(graph.slots.size());
    for (const StateSlot& slot : graph.slots) type(slot.type);
    count(graph.nodes.size());
    for (const Node& node : graph.nodes) this->node(node);
    count(graph.regions.size());
    for (const Region& region : graph.regions) this->region(region);
    return hash_.finish();
  }

 private:
  template <class U>
  void little_endian(U x) {
    std::array<uint8_t, sizeof(U)> bytes;
    for (size_t i = 0; i < sizeof(U); ++i) bytes[i] = static_cast<uint8_t>(x >> (8 * i));
    hash_.update(bytes);
  }
  void u8(uint8_t x) { little_endian(x); }
  void u32(uint32_t x) { little_endian(x); }
  void u64(uint64_t x) { little_endian(x); }
  void count(size_t n) { u64(n); }
  void f32(float x) { u32(std::bit_cast<uint32_t>(x)); }
  void flag(bool x) { u8(x ? 1 : 0); }
  void text(std::string_view s) {
    count(s.size());
    hash_.update(s);
  }
  template <class Tag>
  void id(Id<Tag> x) { u32(x.index); }
  template <class T>
  void optional(const std::optional<T>& x) {
    flag(x.has_value());
    if (x) attribute(*x);
  }
  template <class IdT>
  void ids(const std::vector<IdT>& xs) {
    count(xs.size());
    for (IdT x : xs) id(x);
  }

  void type(const ValueType& t) {
    u8(static_cast<uint8_t>(t.dtype));
    count(t.shape.size());
    for (const Dim& dim : t.shape) {
      flag(dim.is_symbolic());
      if (!dim.is_symbolic()) {
        u64(static_cast<uint64_t>(dim.size));
        continue;
      }
      text(dim.symbol);
      u64(static_cast<uint64_t>(dim.lower));
      text(dim.bound);
    }
  }

  // One overload per attribute field type, so each op lists its fields once.
  void attribute(ValueId x) { id(x); }
  void attribute(TensorId x) { id(x); }
  void attribute(SlotId x) { id(x); }
  void attribute(float x) { f32(x); }
  void attribute(uint32_t x) { u32(x); }
  void attribute(bool x) { flag(x); }
  template <class E>
    requires std::is_enum_v<E>
  void attribute(E x) { u8(static_cast<uint8_t>(x)); }
  template <class T>
  void attribute(const std::optional<T>& x) { optional(x); }
  template <class... T>
  void attributes(const T&... fields) { (attribute(fields), ...); }

  void op(const Op& op) {
    u8(static_cast<uint8_t>(op.index()));
    std::visit(Overloaded{
                   [&](const Input& a) { attributes(a.kind); },
                   [&](const Output& a) { attributes(a.kind); },
                   [&](const Embedding& a) { attributes(a.table); },
                   [&](const MatMul& a) { attributes(a.weight, a.bias); },
                   [&](const RmsNorm& a) { attributes(a.weight, a.eps); },
                   [&](const LayerNorm& a) { attributes(a.weight, a.bias, a.eps); },
                   [&](const Rope& a) {
                     attributes(a.theta, a.layout, a.head_dim, a.rotary_dim);
                     rope_scaling(a.scaling);
                   },
                   [&](const StateAppend& a) { attributes(a.slot); },
                   [&](const CausalAttention& a) {
                     attributes(a.heads, a.kv_heads, a.head_dim, a.scale, a.accepts_position_holes);
                   },
                   [&](const Gelu& a) { attributes(a.approximation); },
                   [&](const TopKRoute& a) { attributes(a.k, a.tie_policy, a.normalize_top_k, a.capacity, a.scope); },
                   [&](const Merge& a) { attributes(a.mode); },
                   [&](const Logits& a) { attributes(a.weight); },
                   // Add, Mul, Silu, SwiGlu, Softmax, Sigmoid: no attributes.
                   [](const auto&) {},
               },
               op);
  }

  void rope_scaling(const RopeScaling& scaling) {
    u8(static_cast<uint8_t>(scaling.index()));
    std::visit(Overloaded{
                   [](const RopeNoScaling&) {},
                   [&](const RopeLinearScaling& s) { attributes(s.factor); },
                   [&](const RopeLlama3Scaling& s) { attributes(s.freq_factors); },
                   [&](const RopeYarnScaling& s) {
                     attributes(s.factor, s.original_context, s.ext_factor, s.attn_factor, s.beta_fast, s.beta_slow);
                   },
               },
               scaling);
  }

  void node(const Node& n) {
    op(n.op);
    ids(n.operands);
    optional(n.result);
  }

  void region(const Region& r) {
    attributes(r.kind.tag, r.kind.layer, r.kind.expert);
    ids(r.members);
    const RegionActivation& a = r.activation;
    u8(static_cast<uint8_t>(a.decision.index()));
    std::visit(Overloaded{
                   [](const AlwaysActive&) {},
                   [&](const RouteSlot& d) { attributes(d.router, d.slot); },
                   [&](const PolicyDecision& d) { attributes(d.value); },
               },
               a.decision);
    attributes(a.provenance);
    u8(static_cast<uint8_t>(a.skip.index()));
    if (auto* bypass = std::get_if<Bypass>(&a.skip)) attributes(bypass->input, bypass->output);
  }

  Sha256 hash_;
};

}  // namespace

Sha256Digest fingerprint(const Graph& graph) { return CanonicalEncoder().encode(graph); }

std::string fingerprint_hex(const Graph& graph) { return to_hex(fingerprint(graph)); }

}  // namespace synapse::ir
