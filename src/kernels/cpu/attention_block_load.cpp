// The block loader of attention_tile.h (AttentionTileKernel::load_block),
// compiled once per Highway target: converts a block's keys and values to
// f32 for a group of tiles, a few rows at a time, keys transposed.

#include "kernels/cpu/hwy_targets.h"  // first: configures Highway

#include <algorithm>
#include <cstring>
#include <iterator>

#include "encoding/blocks.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_tile.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/attention_block_load.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include "kernels/cpu/hwy_float_vectors.h"  // D, V, hn of this target

HWY_BEFORE_NAMESPACE();
namespace synapse::cpu::HWY_NAMESPACE {
namespace {

constexpr size_t kLanes = hn::MaxLanes(D());
static_assert(kKeyBlock % key_step(kLanes) == 0, "a key block is whole score steps");

int64_t lanes() { return static_cast<int64_t>(kLanes); }

// The encodings with a vector loader; any other goes through its codec.
enum class RowFormat { F32, F16, Q8_0, Codec };

RowFormat row_format(Encoding encoding) {
  switch (encoding) {
    case Encoding::F32: return RowFormat::F32;
    case Encoding::F16: return RowFormat::F16;
    case Encoding::Q8_0: return RowFormat::Q8_0;
    default: return RowFormat::Codec;
  }
}

// n elements of a row stored in `encoding` (of format F), as f32 (exact in
// every encoding).
template <RowFormat F>
HWY_INLINE void load_row(Encoding encoding, const uint8_t* src, float* dst, int64_t n) {
  const D d;
  const int64_t step = lanes();
  if constexpr (F == RowFormat::F32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else if constexpr (F == RowFormat::F16) {
    const hn::Rebind<hwy::float16_t, D> dh;
    const auto* halves = reinterpret_cast<const hwy::float16_t*>(src);
    const int64_t body = n / step * step;
    for (int64_t i = 0; i < body; i += step) hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, halves + i)), d, dst + i);
    if (body < n) dequantize_row(encoding, halves + body, dst + body, n - body);
  } else if constexpr (F == RowFormat::Q8_0) {
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

// Transposes the kLanes x kLanes block of rows r: after log2(kLanes) rounds
// of even/odd lane splits, r[c] holds what was column c.
HWY_INLINE void transpose_square(V* r) {
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to do
  const D d;
  for (size_t round = 1; round < kLanes; round *= 2) {
    V split[kLanes];
    for (size_t j = 0; j < kLanes / 2; ++j) {
      split[j] = hn::ConcatEven(d, r[2 * j + 1], r[2 * j]);
      split[kLanes / 2 + j] = hn::ConcatOdd(d, r[2 * j + 1], r[2 * j]);
    }
    std::copy(split, split + kLanes, r);
  }
#endif
}

// Up to kLanes rows of a block: where each row's K and V start.
struct RowGroup {
  const uint8_t* k[kLanes];
  const uint8_t* v[kLanes];
  int64_t count = 0;  // rows present in the block (the rest is padding)
};

// Keys i0 .. i0 + kLanes - 1 of the tile's kv head, transposed into its
// keys_t [stride][kKeyBlock] (zeros past the group's rows, past head_dim and
// in holes), and its values into values [kKeyBlock][stride] likewise.
template <RowFormat FK, RowFormat FV>
void load_group(const AttentionTile& tile, int64_t stride, const RowGroup& group, int64_t i0, uint64_t holes,
                float* keys_t, float* values) {
  const D d;
  const int64_t head_dim = tile.shape.head_dim;
  const ref::StateRows& k = *tile.k;
  const ref::StateRows& v = *tile.v;
  const uint64_t k_offset = head_offset(tile, k);
  const uint64_t v_offset = head_offset(tile, v);
  alignas(64) float rows[kLanes * kMaxAttentionHeadDim];  // the keys as rows
  for (int64_t r = 0; r < lanes(); ++r) {
    float* key = rows + r * stride;
    float* value = values + (i0 + r) * stride;
    if (r >= group.count || ((holes >> (i0 + r)) & 1u)) {
      std::fill(key, key + stride, 0.0f);
      if (r < group.count) std::fill(value, value + stride, 0.0f);
      continue;
    }
    load_row<FK>(k.encoding, group.k[r] + k_offset, key, head_dim);
    load_row<FV>(v.encoding, group.v[r] + v_offset, value, head_dim);
    std::fill(key + head_dim, key + stride, 0.0f);
    std::fill(value + head_dim, value + stride, 0.0f);
  }
  for (int64_t e0 = 0; e0 < stride; e0 += lanes()) {
    V square[kLanes];
    for (size_t r = 0; r < kLanes; ++r) square[r] = hn::Load(d, rows + r * stride + e0);
    transpose_square(square);
    for (size_t c = 0; c < kLanes; ++c) hn::Store(square[c], d, keys_t + (e0 + c) * kKeyBlock + i0);
  }
}

// Rows first .. first + count - 1 (none when count <= 0).
RowGroup row_group(const ref::StateRows& k, const ref::StateRows& v, int64_t first, int64_t count) {
  RowGroup group;
  group.count = std::max<int64_t>(0, count);
  if (group.count == 0) return group;
  k.for_each_row(first, group.count, [&](int64_t p, const uint8_t* row, bool) { group.k[p - first] = row; });
  v.for_each_row(first, group.count, [&](int64_t p, const uint8_t* row, bool) { group.v[p - first] = row; });
  return group;
}

// Asks for the tile's kv head in the group's rows ahead of their use: a
// head is a short piece of each row, one row apart, which the hardware
// prefetchers do not follow across pages. Into L2, not L1: the rows are
// asked for a block ahead, and brought into L1 they were evicted before
// their use, and evicted the tiles' block buffers (1-thread decode
// attention at depth 32768, bench/kernels on a Zen 4 EPYC: Llama-3.2-1B's
// shape 18.5 -> 9.2 ms a layer, OLMoE's 82 -> 65).
void prefetch_group(const AttentionTile& tile, const RowGroup& group) {
  constexpr uint64_t kLine = 64;
  for (const ref::StateRows* rows : {tile.k, tile.v}) {
    const uint64_t begin = head_offset(tile, *rows);
    const uint64_t end = begin + row_bytes(rows->encoding, static_cast<uint64_t>(tile.shape.head_dim));
    const uint8_t* const* starts = rows == tile.k ? group.k : group.v;
    for (int64_t r = 0; r < group.count; ++r)
      if (starts[r])
        for (uint64_t b = begin; b < end; b += kLine) __builtin_prefetch(starts[r] + b, 0, /*locality=*/1);
  }
}

template <RowFormat FK, RowFormat FV>
uint64_t load_block_as(const AttentionTile* tiles, int64_t count, int64_t j0, int64_t n, float* const* blocks) {
  const ref::StateRows& k = *tiles[0].k;
  const ref::StateRows& v = *tiles[0].v;
  uint64_t holes = 0;
  k.for_each_row(j0, n, [&](int64_t p, const uint8_t*, bool present) {
    if (!present) holes |= uint64_t{1} << (p - j0);
  });
  constexpr int64_t kKeyStep = key_step(kLanes);
  const int64_t padded = (n + kKeyStep - 1) / kKeyStep * kKeyStep;
  const bool first_block = j0 % kChunkKeys == 0;
  for (int64_t i0 = 0; i0 < padded; i0 += lanes()) {
    const RowGroup group = row_group(k, v, j0 + i0, std::min(lanes(), n - i0));
    // The same rows of the next block, asked for tile by tile as this
    // block's are used: as many lines at a time as the memory system takes
    // (a whole block at once would be mostly dropped).
    const RowGroup next = row_group(k, v, j0 + kKeyBlock + i0, std::min(lanes(), k.count - (j0 + kKeyBlock + i0)));
    // No block before may have asked for a chunk's first block (the
    // context's first, or a chunk that is a task of its own), so there the
    // next group of this block is asked for as this one is used (1-thread
    // decode of the OLMoE-1B-7B shape at short context, Zen 4: load_group
    // 2.9% -> 1.8% of the time, 1.04x tok/s).
    const RowGroup following =
        first_block ? row_group(k, v, j0 + i0 + lanes(), std::min(lanes(), n - i0 - lanes())) : RowGroup{};
    for (int64_t t = 0; t < count; ++t) {
      const TileLayout layout = tile_layout(tiles[t], lanes());
      const int64_t stride = layout.head_stride();
      float* keys_t = blocks[t];
      if (first_block) prefetch_group(tiles[t], following);
      load_group<FK, FV>(tiles[t], stride, group, i0, holes, keys_t, keys_t + stride * kKeyBlock);
      prefetch_group(tiles[t], next);
    }
  }
  return holes;
}

// load_block_as for the tiles' key format FK and value format v.
template <RowFormat FK>
uint64_t load_block_with_keys(const AttentionTile* tiles, int64_t count, int64_t j0, int64_t n, float* const* blocks) {
  switch (row_format(tiles[0].v->encoding)) {
    case RowFormat::F32: return load_block_as<FK, RowFormat::F32>(tiles, count, j0, n, blocks);
    case RowFormat::F16: return load_block_as<FK, RowFormat::F16>(tiles, count, j0, n, blocks);
    case RowFormat::Q8_0: return load_block_as<FK, RowFormat::Q8_0>(tiles, count, j0, n, blocks);
    case RowFormat::Codec: break;
  }
  return load_block_as<FK, RowFormat::Codec>(tiles, count, j0, n, blocks);
}

uint64_t load_block(const AttentionTile* tiles, int64_t count, int64_t j0, int64_t n, float* const* blocks) {
  switch (row_format(tiles[0].k->encoding)) {
    case RowFormat::F32: return load_block_with_keys<RowFormat::F32>(tiles, count, j0, n, blocks);
    case RowFormat::F16: return load_block_with_keys<RowFormat::F16>(tiles, count, j0, n, blocks);
    case RowFormat::Q8_0: return load_block_with_keys<RowFormat::Q8_0>(tiles, count, j0, n, blocks);
    case RowFormat::Codec: break;
  }
  return load_block_with_keys<RowFormat::Codec>(tiles, count, j0, n, blocks);
}

}  // namespace
}  // namespace synapse::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace synapse::cpu {

decltype(AttentionTileKernel::load_block) attention_block_loader(CpuTarget target) {
  static constexpr decltype(AttentionTileKernel::load_block) kLoaders[] =
      SYNAPSE_HWY_PER_CPU_TARGET(load_block);
  const auto index = static_cast<size_t>(target);
  return index < std::size(kLoaders) ? kLoaders[index] : nullptr;
}

}  // namespace synapse::cpu
#endif  // HWY_ONCE
