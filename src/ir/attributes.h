// Operations and their typed attributes. Every number an operation needs is
// an attribute here; kernels and the reference interpreter read it from the
// IR, never from a constant of their own.
//
// The order of the alternatives in Op is part of the canonical encoding
// (fingerprint.cpp): add new operations at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "ir/ids.h"

namespace synapse::ir {

// --- Entry plumbing: not region members -------------------------------------

enum class EntryKind : uint8_t { TokenIds, Positions };
enum class OutputKind : uint8_t { Logits, Hidden };

// An entry input: I32 [Tokens].
struct Input {
  EntryKind kind;
};
// An entry output: consumes one value, defines none.
struct Output {
  OutputKind kind;
};

// --- Operations --------------------------------------------------------------

// ids I32 [T] -> rows of table [vocab, d] -> [T, d].
struct Embedding {
  TensorId table;
};
// x [.., in] * weight[out, in]^T (+ bias [out]) -> [.., out].
struct MatMul {
  TensorId weight;
  std::optional<TensorId> bias;
};
struct Add {};  // a + b, same type
struct Mul {};  // a * b, same type
// x / rms(x) * weight over the last dim, in groups of the weight's length:
// a weight as wide as the dim normalises whole rows; a weight of head_dim
// normalises each head on its own (Qwen3's q/k norm).
struct RmsNorm {
  TensorId weight;
  float eps;
};
struct LayerNorm {
  TensorId weight;
  std::optional<TensorId> bias;
  float eps;
};

// Normal: rotate pairs (2i, 2i+1) (GPT-J/llama.cpp "norm"); NeoX: rotate
// pairs (i, i + rotary_dim/2).
enum class RopeLayout : uint8_t { Normal, NeoX };
struct RopeNoScaling {};
struct RopeLinearScaling {
  float factor;  // positions are divided by it
};
// Llama 3: per-frequency divisors from a weight tensor [rotary_dim / 2].
struct RopeLlama3Scaling {
  TensorId freq_factors;
};
struct RopeYarnScaling {
  float factor;
  uint32_t original_context;
  float ext_factor;
  float attn_factor;
  float beta_fast;
  float beta_slow;
};
using RopeScaling = std::variant<RopeNoScaling, RopeLinearScaling, RopeLlama3Scaling, RopeYarnScaling>;

// x [T, n * head_dim], positions I32 [T] -> x rotated: the first rotary_dim
// dims of each head.
struct Rope {
  float theta;
  RopeLayout layout;
  uint32_t head_dim;
  uint32_t rotary_dim;
  RopeScaling scaling;
};

// x [T, width], positions [T]: writes x into the slot at those positions and
// defines the slot's contents so far, [Context, width] (the state view that
// CausalAttention reads).
struct StateAppend {
  SlotId slot;
};

// q [T, heads * head_dim], k and v views [Context, kv_heads * head_dim],
// positions [T] -> [T, heads * head_dim]. Grouped-query when kv_heads < heads.
// accepts_position_holes: the kernel masks positions missing from the state
// (needed when a skippable region writes that state).
struct CausalAttention {
  uint32_t heads;
  uint32_t kv_heads;
  uint32_t head_dim;
  float scale;
  bool accepts_position_holes;
};

struct Silu {};
enum class GeluApproximation : uint8_t { Erf, Tanh };
struct Gelu {
  GeluApproximation approximation;
};
struct SwiGlu {};   // silu(gate) * up
struct Softmax {};  // over the last dim

// Equal scores: the lower expert index wins (torch.topk and llama.cpp order).
enum class TiePolicy : uint8_t { LowestIndex };
// PerToken: each token's choice depends on that token alone. Batch: choices
// look at the whole batch (expert-choice routing), i.e. at later tokens.
enum class RouteScope : uint8_t { PerToken, Batch };
// scores [T, experts] -> gates [T, experts]: the top k scores of each token
// kept (renormalised to sum 1 when normalize_top_k), the others zero.
// capacity: at most that many tokens per expert in a batch.
struct TopKRoute {
  uint32_t k;
  TiePolicy tie_policy;
  bool normalize_top_k;
  std::optional<uint32_t> capacity;
  RouteScope scope;
};
// A route is causal when a token's choice cannot depend on later tokens; a
// capacity limit couples the tokens of a batch, so it makes a route non-causal.
bool is_causal(const TopKRoute& route);

// GatedSum: operands (gates [T, n], x_0 .. x_{n-1}) -> sum_i gates[:, i] * x_i,
// where x_i may be absent (its gate column is zero).
// SelectActive: operands (x_0 .. x_{n-1}) -> the one that is present.
enum class MergeMode : uint8_t { GatedSum, SelectActive };
struct Merge {
  MergeMode mode;
};

// x [T, d] * weight [vocab, d]^T -> F32 [T, vocab].
struct Logits {
  TensorId weight;
};

struct Sigmoid {};  // 1 / (1 + exp(-x)), elementwise (qwen2moe's shared-expert gate)

using Op = std::variant<Input, Output, Embedding, MatMul, Add, Mul, RmsNorm, LayerNorm, Rope, StateAppend,
                        CausalAttention, Silu, Gelu, SwiGlu, Softmax, TopKRoute, Merge, Logits, Sigmoid>;

const char* op_name(const Op& op);
bool is_entry(const Op& op);  // Input or Output
// The weights an operation reads, in attribute order.
std::vector<TensorId> weights_of(const Op& op);

}  // namespace synapse::ir
