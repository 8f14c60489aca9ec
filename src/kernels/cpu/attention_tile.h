// The per-target inner kernel of cpu::causal_attention (attention.h): a tile
// of queries that share one kv head, held "in lanes" (lane l of query
// vector v is the tile's query v * lanes + l), against one block of keys at
// a time.
//
// A query's arithmetic is fixed by its own position alone: the keys are cut
// into chunks of kChunkKeys and blocks of kKeyBlock counted from position 0;
// within a chunk, blocks update an online softmax state (max m, sum l, the
// weighted sum acc of the values) lane by lane; chunk states are merged in
// chunk order. A lane never looks at another lane, and keys a query may not
// see (later positions, holes, keys the tile reads for its other queries)
// get weight exactly 0, so a query's bits do not depend on which tile holds
// it, on the tile's other queries, or on which thread computes which chunk.
// (A weight-0 key can only flip the sign of an exact zero in acc; `finish`
// writes every zero as +0.)
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_target.h"
#include "kernels/ref/attention.h"

namespace synapse::cpu {

inline constexpr int64_t kKeyBlock = 64;    // keys converted to f32 and scored together
inline constexpr int64_t kChunkKeys = 512;  // keys of one softmax state; a multiple of kKeyBlock
inline constexpr int64_t kMaxTileQueries = 64;

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
  // Smallest and largest last visible key over the tile's lanes (an unused
  // lane counts as -1 in the smallest).
  int64_t min_last = -1;
  int64_t max_last = -1;

  int64_t group() const { return shape.heads / shape.kv_heads; }
  // min(positions[t], k->count - 1) for query i's token t.
  int64_t last_key(int64_t i) const;
};

// Sizes, in floats, of a tile's lane-layout buffers.
struct TileLayout {
  int64_t lanes = 0;
  int64_t vectors = 0;  // query vectors of the tile
  int64_t head_dim = 0;

  // The queries times the scale, [vectors][head_dim][lanes], then each
  // lane's last visible key, [vectors][lanes].
  int64_t queries_floats() const { return vectors * lanes * (head_dim + 1); }
  // A softmax state: per vector acc [head_dim][lanes], l [lanes], m [lanes].
  int64_t state_floats() const { return vectors * lanes * (head_dim + 2); }
  // One key block's K and V rows in f32 and the scores of the tile.
  int64_t scratch_floats() const { return 2 * kKeyBlock * head_dim + vectors * lanes * kKeyBlock; }
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
  // Keys j0 .. j0 + n - 1 into a state, from the loaded queries: j0 a
  // multiple of kKeyBlock, n at most kKeyBlock and the keys within one chunk.
  // scratch holds TileLayout::scratch_floats.
  void (*attend_block)(const AttentionTile& tile, const float* queries, int64_t j0, int64_t n, float* scratch,
                       float* state) = nullptr;
  // state = state merged with the next chunk's state (blocks of that chunk
  // alone, from a reset state).
  void (*merge)(const AttentionTile& tile, const float* chunk, float* state) = nullptr;
  // Writes acc / l of each query into out ([tokens, heads * head_dim]).
  void (*finish)(const AttentionTile& tile, const float* state, float* out) = nullptr;
};

// The kernels for exactly `target` (all null where it is not compiled).
AttentionTileKernel attention_tile_kernel(CpuTarget target);

// The state before any key: m = -inf, l = 0, acc = 0.
void reset_state(const TileLayout& layout, float* state);

}  // namespace synapse::cpu
