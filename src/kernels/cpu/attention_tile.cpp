// The kernels of attention_tile.h, compiled once per Highway target.
//
// Scores are computed with keys in lanes: for each head dimension e in
// order, score[q][keys] += q[e] * keys_t[e][keys], keys_t being the block's
// keys transposed once for all the tile's queries. The weighted sum of values
// has head dimensions in lanes: acc[q][dims] += weight[q][i] * value[i][dims]
// for each key i in order. Both are one fused multiply-add per step in a
// fixed order, whatever the tile holds.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <type_traits>

#include "kernels/cpu/attention_tile.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/attention_tile.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

constexpr size_t kLanes = hn::MaxLanes(D());
// Register blocking: kQueryRows queries at a time, against kKeyVectors
// vectors of keys (scores) or kDimVectors vectors of head dimensions
// (values): 16 accumulators of AVX-512's 32 registers, 8 of AVX2's 16.
constexpr int kQueryRows = 4;
constexpr int kKeyVectors = static_cast<int>(key_step(kLanes) / kLanes);
constexpr int kDimVectors = kKeyVectors;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t lanes() { return static_cast<int64_t>(kLanes); }

void load_queries(const AttentionTile& tile, float* queries) {
  const int64_t head_dim = tile.shape.head_dim;
  const int64_t group = tile.group();
  const int64_t width = tile.shape.heads * head_dim;
  for (int64_t i = 0; i < tile.count; ++i) {
    const int64_t query = tile.first + i;
    const float* q = tile.q + query / group * width + (tile.kv_head * group + query % group) * head_dim;
    for (int64_t e = 0; e < head_dim; ++e) queries[i * head_dim + e] = q[e] * tile.shape.scale;
  }
}

// scores[q][keys] = sum over e < depth, in order, of queries[q][e] * keys_t[e][keys]
// for Q queries and kKeyVectors vectors of keys.
template <int Q>
HWY_INLINE void score_rows(const float* queries, int64_t depth, const float* keys_t, float* scores) {
  const D d;
  V acc[Q][kKeyVectors];
  for (int q = 0; q < Q; ++q)
    for (int g = 0; g < kKeyVectors; ++g) acc[q][g] = hn::Zero(d);
  for (int64_t e = 0; e < depth; ++e) {
    V key[kKeyVectors];
    for (int g = 0; g < kKeyVectors; ++g) key[g] = hn::Load(d, keys_t + e * kKeyBlock + g * lanes());
    for (int q = 0; q < Q; ++q) {
      const V qe = hn::Set(d, queries[q * depth + e]);
      for (int g = 0; g < kKeyVectors; ++g) acc[q][g] = hn::MulAdd(qe, key[g], acc[q][g]);
    }
  }
  for (int q = 0; q < Q; ++q)
    for (int g = 0; g < kKeyVectors; ++g) hn::Store(acc[q][g], d, scores + q * kKeyBlock + g * lanes());
}

// acc[q][dims] = acc[q][dims] * rescale[q] + sum over i < n, in order, of
// weights[q][i] * values[i][dims], for Q queries and DV vectors of dims.
template <int Q, int DV>
HWY_INLINE void accumulate_rows(const float* weights, const float* rescale, const float* values, int64_t stride,
                                int64_t n, float* acc) {
  const D d;
  V sum[Q][DV];
  for (int q = 0; q < Q; ++q)
    for (int c = 0; c < DV; ++c) sum[q][c] = hn::Mul(hn::Load(d, acc + q * stride + c * lanes()), hn::Set(d, rescale[q]));
  for (int64_t i = 0; i < n; ++i) {
    V value[DV];
    for (int c = 0; c < DV; ++c) value[c] = hn::Load(d, values + i * stride + c * lanes());
    for (int q = 0; q < Q; ++q) {
      const V w = hn::Set(d, weights[q * kKeyBlock + i]);
      for (int c = 0; c < DV; ++c) sum[q][c] = hn::MulAdd(w, value[c], sum[q][c]);
    }
  }
  for (int q = 0; q < Q; ++q)
    for (int c = 0; c < DV; ++c) hn::Store(sum[q][c], d, acc + q * stride + c * lanes());
}

template <int Q>
void accumulate_queries(const float* weights, const float* rescale, const float* values, int64_t stride, int64_t n,
                        float* acc) {
  int64_t c = 0;
  for (; c + kDimVectors * lanes() <= stride; c += kDimVectors * lanes())
    accumulate_rows<Q, kDimVectors>(weights, rescale, values + c, stride, n, acc + c);
  for (; c < stride; c += lanes()) accumulate_rows<Q, 1>(weights, rescale, values + c, stride, n, acc + c);
}

// Queries [0, count) in groups of up to kQueryRows: f(group size, first query).
template <class F>
HWY_INLINE void for_query_rows(int64_t count, const F& f) {
  int64_t q = 0;
  for (; q + kQueryRows <= count; q += kQueryRows) f(std::integral_constant<int, kQueryRows>(), q);
  switch (count - q) {
    case 3: f(std::integral_constant<int, 3>(), q); break;
    case 2: f(std::integral_constant<int, 2>(), q); break;
    case 1: f(std::integral_constant<int, 1>(), q); break;
    default: break;
  }
}

// hn::Exp converts its argument to int32 first, which is undefined for -inf
// and NaN (an empty query's -inf - -inf; UBSan flags it on the emulated
// target); below -104 it gives exactly 0, so such arguments become -105.
V exp_of(const D d, V x) {
  const V floor = hn::Set(d, -105.0f);
  return hn::Exp(d, hn::IfThenElse(hn::Ge(x, floor), x, floor));
}

// The online softmax step of one block for the tile's queries: scores
// (-inf where masked) become weights exp(score - m), m and l move on, and
// rescale[q] is what the earlier acc must be multiplied by (exactly 1 where
// m did not grow).
void softmax_step(const AttentionTile& tile, const TileLayout& layout, int64_t padded, float* scores, float* state,
                  float* rescale) {
  const D d;
  const V neg_inf = hn::Set(d, kNegInf);
  alignas(64) float block_max[kMaxTileQueries];
  alignas(64) float block_sum[kMaxTileQueries];
  alignas(64) float reference[kMaxTileQueries];
  std::fill(block_max, block_max + layout.queries(), kNegInf);
  for (int64_t q = 0; q < tile.count; ++q) {
    V m = neg_inf;
    for (int64_t i = 0; i < padded; i += lanes()) m = hn::Max(m, hn::Load(d, scores + q * kKeyBlock + i));
    block_max[q] = hn::GetLane(hn::MaxOfLanes(d, m));
  }
  float* l = state + layout.queries() * layout.head_stride();
  float* m = l + layout.queries();
  for (int64_t q = 0; q < layout.queries(); q += lanes()) {
    const V old_max = hn::Load(d, m + q);
    const V new_max = hn::Max(old_max, hn::Load(d, block_max + q));
    hn::Store(hn::IfThenElse(hn::Gt(new_max, old_max), exp_of(d, hn::Sub(old_max, new_max)), hn::Set(d, 1.0f)), d,
              rescale + q);
    // A query that has seen no key yet keeps m = -inf; its weights are 0.
    hn::Store(hn::IfThenElse(hn::Eq(new_max, neg_inf), hn::Zero(d), new_max), d, reference + q);
    hn::Store(new_max, d, m + q);
  }
  std::fill(block_sum, block_sum + layout.queries(), 0.0f);
  for (int64_t q = 0; q < tile.count; ++q) {
    const V shift = hn::Set(d, reference[q]);
    V sum = hn::Zero(d);
    for (int64_t i = 0; i < padded; i += lanes()) {
      float* s = scores + q * kKeyBlock + i;
      const V weight = exp_of(d, hn::Sub(hn::Load(d, s), shift));
      hn::Store(weight, d, s);
      sum = hn::Add(sum, weight);
    }
    block_sum[q] = hn::GetLane(hn::SumOfLanes(d, sum));
  }
  for (int64_t q = 0; q < layout.queries(); q += lanes())
    hn::Store(hn::MulAdd(hn::Load(d, l + q), hn::Load(d, rescale + q), hn::Load(d, block_sum + q)), d, l + q);
}

// Scores -inf for the keys of the block at j0 a query may not see.
void mask_scores(const AttentionTile& tile, int64_t j0, int64_t padded, uint64_t holes, float* scores) {
  const D d;
  const V neg_inf = hn::Set(d, kNegInf);
  for (int64_t q = 0; q < tile.count; ++q) {
    float* s = scores + q * kKeyBlock;
    const int64_t visible = std::clamp<int64_t>(tile.last_key(tile.first + q) + 1 - j0, 0, padded);
    for (int64_t i = visible / lanes() * lanes(); i < padded; i += lanes()) {
      const auto seen = hn::FirstN(d, static_cast<size_t>(std::max<int64_t>(0, visible - i)));
      hn::Store(hn::IfThenElse(seen, hn::Load(d, s + i), neg_inf), d, s + i);
    }
    for (uint64_t h = holes; h != 0; h &= h - 1) s[std::countr_zero(h)] = kNegInf;
  }
}

void attend_block(const AttentionTile& tile, const float* queries, int64_t j0, int64_t n, uint64_t holes,
                  const float* block, float* scores, float* state) {
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t stride = layout.head_stride();
  constexpr int64_t kKeyStep = key_step(kLanes);
  const int64_t padded = (n + kKeyStep - 1) / kKeyStep * kKeyStep;
  const float* keys_t = block;
  const float* values = keys_t + stride * kKeyBlock;
  for_query_rows(tile.count, [&](auto rows, int64_t q) {
    for (int64_t i = 0; i < padded; i += kKeyStep)
      score_rows<decltype(rows)::value>(queries + q * layout.head_dim, layout.head_dim, keys_t + i,
                                        scores + q * kKeyBlock + i);
  });
  mask_scores(tile, j0, padded, holes, scores);
  alignas(64) float rescale[kMaxTileQueries];
  softmax_step(tile, layout, padded, scores, state, rescale);
  for_query_rows(tile.count, [&](auto rows, int64_t q) {
    accumulate_queries<decltype(rows)::value>(scores + q * kKeyBlock, rescale + q, values, stride, n,
                                              state + q * stride);
  });
}

// acc and l of both states scale by exp(own m - common m) (exactly 1 for
// the state holding the common m, so an empty state changes nothing).
void merge(const AttentionTile& tile, const float* chunk, float* state) {
  const D d;
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t stride = layout.head_stride();
  const int64_t queries = layout.queries();
  alignas(64) float own[kMaxTileQueries];
  alignas(64) float other[kMaxTileQueries];
  const V one = hn::Set(d, 1.0f);
  for (int64_t q = 0; q < queries; q += lanes()) {
    float* l = state + queries * stride + q;
    const float* chunk_l = chunk + queries * stride + q;
    const V state_max = hn::Load(d, l + queries);
    const V chunk_max = hn::Load(d, chunk_l + queries);
    const V max = hn::Max(state_max, chunk_max);
    const V a = hn::IfThenElse(hn::Eq(state_max, max), one, exp_of(d, hn::Sub(state_max, max)));
    const V b = hn::IfThenElse(hn::Eq(chunk_max, max), one, exp_of(d, hn::Sub(chunk_max, max)));
    hn::Store(a, d, own + q);
    hn::Store(b, d, other + q);
    hn::Store(hn::MulAdd(hn::Load(d, chunk_l), b, hn::Mul(hn::Load(d, l), a)), d, l);
    hn::Store(max, d, l + queries);
  }
  for (int64_t q = 0; q < tile.count; ++q) {
    const V a = hn::Set(d, own[q]);
    const V b = hn::Set(d, other[q]);
    for (int64_t c = 0; c < stride; c += lanes()) {
      float* x = state + q * stride + c;
      hn::Store(hn::MulAdd(hn::Load(d, chunk + q * stride + c), b, hn::Mul(hn::Load(d, x), a)), d, x);
    }
  }
}

void finish(const AttentionTile& tile, const float* state, float* out) {
  const D d;
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t head_dim = layout.head_dim;
  const int64_t stride = layout.head_stride();
  const int64_t group = tile.group();
  const int64_t width = tile.shape.heads * head_dim;
  const float* l = state + layout.queries() * stride;
  alignas(64) float inverse[kMaxTileQueries];
  for (int64_t q = 0; q < layout.queries(); q += lanes()) {
    const V lq = hn::Load(d, l + q);
    hn::Store(hn::IfThenElse(hn::Gt(lq, hn::Zero(d)), hn::Div(hn::Set(d, 1.0f), lq), hn::Zero(d)), d, inverse + q);
  }
  alignas(64) float tail[kMaxLanes];
  for (int64_t q = 0; q < tile.count; ++q) {
    const int64_t query = tile.first + q;
    float* row = out + query / group * width + (tile.kv_head * group + query % group) * head_dim;
    const V scale = hn::Set(d, inverse[q]);
    for (int64_t c = 0; c < head_dim; c += lanes()) {
      // + 0 writes -0 as +0 (see attention_tile.h).
      const V x = hn::Add(hn::Mul(hn::Load(d, state + q * stride + c), scale), hn::Zero(d));
      if (c + lanes() <= head_dim) {
        hn::StoreU(x, d, row + c);
      } else {
        hn::Store(x, d, tail);
        std::copy(tail, tail + (head_dim - c), row + c);
      }
    }
  }
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

int64_t AttentionTile::last_key(int64_t i) const {
  return std::min<int64_t>(positions[i / group()], k->count - 1);
}

void reset_state(const TileLayout& layout, float* state) {
  float* m = state + layout.queries() * (layout.head_stride() + 1);
  std::fill(state, m, 0.0f);  // acc and l
  std::fill(m, m + layout.queries(), -std::numeric_limits<float>::infinity());
}

AttentionTileKernel attention_tile_kernel(CpuTarget target) {
  using LanesOfTarget = int64_t (*)();
  static constexpr LanesOfTarget kLanes[] = SYNAPSE_HWY_PER_CPU_TARGET(lanes);
  static constexpr decltype(AttentionTileKernel::load_queries) kLoad[] = SYNAPSE_HWY_PER_CPU_TARGET(load_queries);
  static constexpr decltype(AttentionTileKernel::attend_block) kBlock[] = SYNAPSE_HWY_PER_CPU_TARGET(attend_block);
  static constexpr decltype(AttentionTileKernel::merge) kMerge[] = SYNAPSE_HWY_PER_CPU_TARGET(merge);
  static constexpr decltype(AttentionTileKernel::finish) kFinish[] = SYNAPSE_HWY_PER_CPU_TARGET(finish);
  const auto index = static_cast<size_t>(target);
  if (index >= std::size(kLanes) || !kLanes[index]) return {};
  return {kLanes[index](), kLoad[index], attention_block_loader(target), kBlock[index], kMerge[index], kFinish[index]};
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
