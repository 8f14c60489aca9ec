// The kernels of attention_tile.h, compiled once per Highway target.
//
// Scores and the weighted sum of values are outer products in lane layout:
// a key row (or a value column) is broadcast element by element against
// the tile's query vectors, so no key is ever transposed and every lane sums
// its products one at a time in a fixed order, whatever its neighbours are.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <limits>

#include "encoding/blocks.h"
#include "kernels/cpu/attention_tile.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/attention_tile.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn, kMaxLanes of this target
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

// Register blocking of the outer products: kRows rows times kPair query
// vectors of accumulators (16 of AVX-512's 32 registers, 8 of AVX2's 16).
constexpr int kRows = HWY_MAX_BYTES >= 64 ? 8 : 4;
constexpr int kPair = 2;
constexpr size_t kMaxVectors = kMaxTileQueries / HWY_LANES(float);
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(D())); }

// For R rows r and NV query vectors v (lane arrays b_v = b + v * b_stride,
// [k][lanes], and out_v = out + v * out_stride, [r][lanes]):
//   out_v[r] = out_v[r] * rescale[v] (0 without rescale)
//              + sum over k < depth of a[r * r_stride + k * k_stride] * b_v[k],
// one fused multiply-add per k in k order.
template <int R, int NV>
HWY_INLINE void outer_product_block(const float* a, int64_t r_stride, int64_t k_stride, int64_t depth,
                                    const float* b, int64_t b_stride, float* out, int64_t out_stride,
                                    const V* rescale) {
  const D d;
  const int64_t n = lanes();
  V acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = rescale ? hn::Mul(hn::LoadU(d, out + v * out_stride + r * n), rescale[v]) : hn::Zero(d);
  for (int64_t k = 0; k < depth; ++k) {
    V bk[NV];
    for (int v = 0; v < NV; ++v) bk[v] = hn::LoadU(d, b + v * b_stride + k * n);
    for (int r = 0; r < R; ++r) {
      const V ar = hn::Set(d, a[r * r_stride + k * k_stride]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(ar, bk[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, out + v * out_stride + r * n);
}

// outer_product_block over `rows` rows and `vectors` query vectors.
template <int NV>
void outer_product_rows(const float* a, int64_t r_stride, int64_t k_stride, int64_t depth, int64_t rows,
                        const float* b, int64_t b_stride, float* out, int64_t out_stride, const V* rescale) {
  const int64_t n = lanes();
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows)
    outer_product_block<kRows, NV>(a + r * r_stride, r_stride, k_stride, depth, b, b_stride, out + r * n,
                                   out_stride, rescale);
  for (; r < rows; ++r)
    outer_product_block<1, NV>(a + r * r_stride, r_stride, k_stride, depth, b, b_stride, out + r * n, out_stride,
                               rescale);
}

void outer_product(const float* a, int64_t r_stride, int64_t k_stride, int64_t depth, int64_t rows, const float* b,
                   int64_t b_stride, float* out, int64_t out_stride, int64_t vectors, const V* rescale) {
  int64_t v = 0;
  for (; v + kPair <= vectors; v += kPair)
    outer_product_rows<kPair>(a, r_stride, k_stride, depth, rows, b + v * b_stride, b_stride, out + v * out_stride,
                              out_stride, rescale ? rescale + v : nullptr);
  for (; v < vectors; ++v)
    outer_product_rows<1>(a, r_stride, k_stride, depth, rows, b + v * b_stride, b_stride, out + v * out_stride,
                          out_stride, rescale ? rescale + v : nullptr);
}

// n elements of a row stored in `encoding`, as f32 (exact in every encoding).
void load_row(Encoding encoding, const uint8_t* src, float* dst, int64_t n) {
  const D d;
  const int64_t step = lanes();
  if (encoding == Encoding::F32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else if (encoding == Encoding::F16) {
    const hn::Rebind<hwy::float16_t, D> dh;
    const auto* halves = reinterpret_cast<const hwy::float16_t*>(src);
    const int64_t body = n / step * step;
    for (int64_t i = 0; i < body; i += step) hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, halves + i)), d, dst + i);
    if (body < n) dequantize_row(encoding, halves + body, dst + body, n - body);
  } else if (encoding == Encoding::Q8_0) {
    const hn::Rebind<int32_t, D> di;
    const hn::Rebind<int8_t, D> d8;
    const auto* blocks = reinterpret_cast<const blocks::Q8_0*>(src);
    for (int64_t b = 0; b < n / blocks::kLegacyElems; ++b) {
      const V scale = hn::Set(d, blocks[b].d.get());
      for (int64_t i = 0; i < blocks::kLegacyElems; i += step) {
        const V quants = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, blocks[b].qs + i)));
        hn::StoreU(hn::Mul(scale, quants), d, dst + b * blocks::kLegacyElems + i);
      }
    }
  } else {
    dequantize_row(encoding, src, dst, n);
  }
}

// Where the tile's kv head starts in a row of `rows`.
uint64_t head_offset(const AttentionTile& tile, const ref::StateRows& rows) {
  return static_cast<uint64_t>(tile.kv_head) * row_bytes(rows.encoding, static_cast<uint64_t>(tile.shape.head_dim));
}

// Keys and values j0 .. j0 + n - 1 of the tile's kv head into f32 rows;
// returns a bit per hole (a row never written: zeros, not read).
uint64_t load_block(const AttentionTile& tile, int64_t j0, int64_t n, float* keys, float* values) {
  const int64_t head_dim = tile.shape.head_dim;
  const ref::StateRows& k = *tile.k;
  const ref::StateRows& v = *tile.v;
  const uint64_t k_offset = head_offset(tile, k);
  const uint64_t v_offset = head_offset(tile, v);
  uint64_t holes = 0;
  for (int64_t i = 0; i < n; ++i) {
    float* key = keys + i * head_dim;
    float* value = values + i * head_dim;
    if (!k.has(j0 + i)) {
      holes |= uint64_t{1} << i;
      std::fill(key, key + head_dim, 0.0f);
      std::fill(value, value + head_dim, 0.0f);
      continue;
    }
    load_row(k.encoding, k.row(j0 + i) + k_offset, key, head_dim);
    load_row(v.encoding, v.row(j0 + i) + v_offset, value, head_dim);
  }
  return holes;
}

void load_queries(const AttentionTile& tile, float* queries) {
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t head_dim = layout.head_dim;
  const int64_t group = tile.group();
  const int64_t width = tile.shape.heads * head_dim;
  float* last = queries + layout.vectors * head_dim * layout.lanes;
  for (int64_t v = 0; v < layout.vectors; ++v)
    for (int64_t lane = 0; lane < layout.lanes; ++lane) {
      const int64_t i = v * layout.lanes + lane;
      float* column = queries + v * head_dim * layout.lanes + lane;
      if (i >= tile.count) {  // an unused lane: sees no key
        for (int64_t e = 0; e < head_dim; ++e) column[e * layout.lanes] = 0.0f;
        last[i] = -1.0f;
        continue;
      }
      const int64_t query = tile.first + i;
      const float* q = tile.q + query / group * width + (tile.kv_head * group + query % group) * head_dim;
      for (int64_t e = 0; e < head_dim; ++e) column[e * layout.lanes] = q[e] * tile.shape.scale;
      last[i] = static_cast<float>(tile.last_key(query));
    }
}

// Scores -inf for the keys of the block at j0 a lane may not see.
void mask_scores(const AttentionTile& tile, const TileLayout& layout, const float* last, int64_t j0, int64_t n,
                 uint64_t holes, float* scores) {
  const D d;
  const V neg_inf = hn::Set(d, kNegInf);
  const int64_t first_masked = std::max<int64_t>(0, tile.min_last + 1 - j0);
  for (int64_t v = 0; v < layout.vectors; ++v) {
    float* s = scores + v * kKeyBlock * layout.lanes;
    const V last_v = hn::LoadU(d, last + v * layout.lanes);
    for (int64_t i = first_masked; i < n; ++i) {
      const auto later = hn::Lt(last_v, hn::Set(d, static_cast<float>(j0 + i)));
      hn::StoreU(hn::IfThenElse(later, neg_inf, hn::LoadU(d, s + i * layout.lanes)), d, s + i * layout.lanes);
    }
    for (uint64_t h = holes; h != 0; h &= h - 1)
      hn::StoreU(neg_inf, d, s + std::countr_zero(h) * layout.lanes);
  }
}

// The online softmax step of one block: scores become weights
// exp(score - m), m and l move on, and rescale[v] is what the earlier acc
// must be multiplied by (exactly 1 where m did not grow).
// hn::Exp converts its argument to int32 first, which is undefined for -inf
// and NaN (an empty lane's -inf - -inf; UBSan flags it on the emulated
// target); below -104 it gives exactly 0, so such arguments become -105.
V exp_of(const D d, V x) {
  const V floor = hn::Set(d, -105.0f);
  return hn::Exp(d, hn::IfThenElse(hn::Ge(x, floor), x, floor));
}

void softmax_step(const TileLayout& layout, int64_t n, float* scores, float* state, V* rescale) {
  const D d;
  const V neg_inf = hn::Set(d, kNegInf);
  for (int64_t v = 0; v < layout.vectors; ++v) {
    float* s = scores + v * kKeyBlock * layout.lanes;
    float* l = state + (v * (layout.head_dim + 2) + layout.head_dim) * layout.lanes;
    float* m = l + layout.lanes;
    V block_max = neg_inf;
    for (int64_t i = 0; i < n; ++i) block_max = hn::Max(block_max, hn::LoadU(d, s + i * layout.lanes));
    const V old_max = hn::LoadU(d, m);
    const V new_max = hn::Max(old_max, block_max);
    rescale[v] = hn::IfThenElse(hn::Gt(new_max, old_max), exp_of(d, hn::Sub(old_max, new_max)), hn::Set(d, 1.0f));
    // A lane that has seen no key yet keeps m = -inf; its weights are 0.
    const V reference = hn::IfThenElse(hn::Eq(new_max, neg_inf), hn::Zero(d), new_max);
    V sum = hn::Zero(d);
    for (int64_t i = 0; i < n; ++i) {
      const V weight = exp_of(d, hn::Sub(hn::LoadU(d, s + i * layout.lanes), reference));
      hn::StoreU(weight, d, s + i * layout.lanes);
      sum = hn::Add(sum, weight);
    }
    hn::StoreU(hn::MulAdd(hn::LoadU(d, l), rescale[v], sum), d, l);
    hn::StoreU(new_max, d, m);
  }
}

void attend_block(const AttentionTile& tile, const float* queries, int64_t j0, int64_t n, float* scratch,
                  float* state) {
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t head_dim = layout.head_dim;
  const int64_t q_stride = head_dim * layout.lanes;            // between query vectors of queries
  const int64_t s_stride = kKeyBlock * layout.lanes;           // ... of the scores
  const int64_t state_stride = (head_dim + 2) * layout.lanes;  // ... of the state
  float* keys = scratch;
  float* values = keys + kKeyBlock * head_dim;
  float* scores = values + kKeyBlock * head_dim;
  const uint64_t holes = load_block(tile, j0, n, keys, values);
  // scores[v][i] = sum over e of keys[i][e] * queries[v][e]
  outer_product(keys, head_dim, 1, head_dim, n, queries, q_stride, scores, s_stride, layout.vectors, nullptr);
  mask_scores(tile, layout, queries + layout.vectors * q_stride, j0, n, holes, scores);
  V rescale[kMaxVectors];
  softmax_step(layout, n, scores, state, rescale);
  // acc[v][e] = acc[v][e] * rescale[v] + sum over i of values[i][e] * weights[v][i]
  outer_product(values, 1, head_dim, n, head_dim, scores, s_stride, state, state_stride, layout.vectors, rescale);
}

// The rows acc and l of both states scale by exp(own m - common m) (exactly
// 1 for the state holding the common m, so an empty state changes nothing).
void merge(const AttentionTile& tile, const float* chunk, float* state) {
  const D d;
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t scaled_rows = layout.head_dim + 1;
  for (int64_t v = 0; v < layout.vectors; ++v) {
    const float* c = chunk + v * (layout.head_dim + 2) * layout.lanes;
    float* s = state + v * (layout.head_dim + 2) * layout.lanes;
    const V state_max = hn::LoadU(d, s + scaled_rows * layout.lanes);
    const V chunk_max = hn::LoadU(d, c + scaled_rows * layout.lanes);
    const V max = hn::Max(state_max, chunk_max);
    const V one = hn::Set(d, 1.0f);
    const V a = hn::IfThenElse(hn::Eq(state_max, max), one, exp_of(d, hn::Sub(state_max, max)));
    const V b = hn::IfThenElse(hn::Eq(chunk_max, max), one, exp_of(d, hn::Sub(chunk_max, max)));
    for (int64_t r = 0; r < scaled_rows; ++r) {
      float* x = s + r * layout.lanes;
      hn::StoreU(hn::MulAdd(hn::LoadU(d, c + r * layout.lanes), b, hn::Mul(hn::LoadU(d, x), a)), d, x);
    }
    hn::StoreU(max, d, s + scaled_rows * layout.lanes);
  }
}

void finish(const AttentionTile& tile, const float* state, float* out) {
  const D d;
  const TileLayout layout = tile_layout(tile, lanes());
  const int64_t head_dim = layout.head_dim;
  const int64_t group = tile.group();
  const int64_t width = tile.shape.heads * head_dim;
  for (int64_t v = 0; v < layout.vectors; ++v) {
    const float* s = state + v * (head_dim + 2) * layout.lanes;
    const int64_t used = std::min(layout.lanes, tile.count - v * layout.lanes);
    float* rows[kMaxLanes];
    for (int64_t lane = 0; lane < used; ++lane) {
      const int64_t query = tile.first + v * layout.lanes + lane;
      rows[lane] = out + query / group * width + (tile.kv_head * group + query % group) * head_dim;
    }
    const V l = hn::LoadU(d, s + head_dim * layout.lanes);
    const V inverse = hn::IfThenElse(hn::Gt(l, hn::Zero(d)), hn::Div(hn::Set(d, 1.0f), l), hn::Zero(d));
    alignas(64) float column[kMaxLanes];
    for (int64_t e = 0; e < head_dim; ++e) {
      // + 0 writes -0 as +0 (see attention_tile.h).
      hn::Store(hn::Add(hn::Mul(hn::LoadU(d, s + e * layout.lanes), inverse), hn::Zero(d)), d, column);
      for (int64_t lane = 0; lane < used; ++lane) rows[lane][e] = column[lane];
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
  for (int64_t v = 0; v < layout.vectors; ++v) {
    float* s = state + v * (layout.head_dim + 2) * layout.lanes;
    std::fill(s, s + (layout.head_dim + 1) * layout.lanes, 0.0f);  // acc and l
    std::fill(s + (layout.head_dim + 1) * layout.lanes, s + (layout.head_dim + 2) * layout.lanes,
              -std::numeric_limits<float>::infinity());  // m
  }
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
  return {kLanes[index](), kLoad[index], kBlock[index], kMerge[index], kFinish[index]};
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
