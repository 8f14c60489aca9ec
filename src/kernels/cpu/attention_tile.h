// The per-target inner kernel of cpu::causal_attention (attention.h): a tile
// of queries that share one kv head against one block of keys at a time.
//
// A query's arithmetic is fixed by its own position alone: the keys are cut
// into chunks of kChunkKeys and blocks of kKeyBlock counted from position 0;
// within a chunk, blocks update an online softmax state (max m, sum l, the
// weighted sum acc of the values) query by query; chunk states are merged
// in chunk order. Keys a query may not see (later positions, holes, keys the
// tile reads for its other queries) get weight exactly 0, so a query's bits
// do not depend on which tile holds it, on the tile's other queries, or on
// which thread computes which chunk. (A weight-0 key can only flip the sign
// of an exact zero in acc; `finish` writes every zero as +0.)
//
// Every lane of every vector does useful work whatever the tile's size, so
// a decode step (a tile of one token's `group` queries) costs no more per
// score than a prompt: scores have keys in lanes (a block's keys are
// transposed once for all the tile's queries), the weighted sum of values
// has head dimensions in lanes.
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_target.h"
#include "kernels/ref/attention.h"

namespace synapse::cpu {

inline constexpr int64_t kKeyBlock = 64;    // keys converted to f32 and scored together
inline constexpr int64_t kChunkKeys = 512;  // keys of one softmax state; a multiple of kKeyBlock
inline constexpr int64_t kMaxTileQueries = 64;

// Keys scored per step by a target of `lanes` floats: the loader pads a
// block's keys to a multiple of it (4 vectors of keys with AVX-512's 32
// registers, 2 with fewer).
constexpr int64_t key_step(int64_t lanes) { return lanes * (lanes >= 16 ? 4 : 2); }

// One tile: queries [first, first + count) of kv head kv_head, query i
// being head kv_head * group + i % group of token i / group.
struct AttentionTile {
  const float* q = nullptr;  // [tokens, heads * head_dim]
  const int32_t* positions = nullptr;
  const ref::StateRows* k = nullptr;
  const ref::StateRows* v = nullptr;
  ref::AttentionShape shape;
  int64_t kv_head = 0;
  int64_t first = 0;
  int64_t count = 0;
  // The largest last visible key over the tile's queries.
  int64_t max_last = -1;

  int64_t group() const { return shape.heads / shape.kv_heads; }
  // min(positions[t], k->count - 1) for query i's token t.
  int64_t last_key(int64_t i) const;
};

// Sizes, in floats, of a tile's buffers.
struct TileLayout {
  int64_t lanes = 0;
  int64_t vectors = 0;  // vectors of queries (lanes queries each) of the tile
  int64_t head_dim = 0;

  int64_t queries() const { return vectors * lanes; }
  // head_dim rounded up to whole vectors: the row stride of values and acc.
  int64_t head_stride() const { return (head_dim + lanes - 1) / lanes * lanes; }
  // The queries times the scale, [queries][head_dim].
  int64_t queries_floats() const { return queries() * head_dim; }
  // A softmax state: acc [queries][head_stride], then l [queries], m [queries].
  int64_t state_floats() const { return queries() * (head_stride() + 2); }
  // One key block of the tile's kv head in f32: keys transposed
  // [head_stride][kKeyBlock], then values [kKeyBlock][head_stride].
  int64_t block_floats() const { return 2 * kKeyBlock * head_stride(); }
  // The tile's scores of one block, [queries][kKeyBlock].
  int64_t scores_floats() const { return queries() * kKeyBlock; }
};

inline TileLayout tile_layout(const AttentionTile& tile, int64_t lanes) {
  return {lanes, (tile.count + lanes - 1) / lanes, tile.shape.head_dim};
}

// The kernels compiled for one CpuTarget. k and v must be F32, F16 or Q8_0
// (other encodings with a codec work, at reference speed).
struct AttentionTileKernel {
  int64_t lanes = 0;  // floats in one vector of the target
  // Fills `queries` (TileLayout::queries_floats) for the tile.
  void (*load_queries)(const AttentionTile& tile, float* queries) = nullptr;
  // Loads keys j0 .. j0 + n - 1 of each tile's kv head into blocks[t]
  // (TileLayout::block_floats), a few rows at a time for all the tiles, so
  // each row is read from memory once whatever the tiles' heads. The tiles
  // share k and v; j0 is a multiple of kKeyBlock, n at most kKeyBlock.
  // Returns a bit per hole (a row never written).
  uint64_t (*load_block)(const AttentionTile* tiles, int64_t count, int64_t j0, int64_t n,
                         float* const* blocks) = nullptr;
  // Keys j0 .. j0 + n - 1 (loaded by load_block with at least n keys, within
  // one chunk) into a state, from the loaded queries. scores holds
  // TileLayout::scores_floats.
  void (*attend_block)(const AttentionTile& tile, const float* queries, int64_t j0, int64_t n, uint64_t holes,
                       const float* block, float* scores, float* state) = nullptr;
  // state = state merged with the next chunk's state (blocks of that chunk
  // alone, from a reset state).
  void (*merge)(const AttentionTile& tile, const float* chunk, float* state) = nullptr;
  // Writes acc / l of each query into out ([tokens, heads * head_dim]).
  void (*finish)(const AttentionTile& tile, const float* state, float* out) = nullptr;
};

// The kernels for exactly `target` (all null where it is not compiled).
AttentionTileKernel attention_tile_kernel(CpuTarget target);
// Its load_block (attention_block_load.cpp).
decltype(AttentionTileKernel::load_block) attention_block_loader(CpuTarget target);

// The state before any key: m = -inf, l = 0, acc = 0.
void reset_state(const TileLayout& layout, float* state);

}  // namespace synapse::cpu
