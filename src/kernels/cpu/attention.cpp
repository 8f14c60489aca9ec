#include "kernels/cpu/attention.h"

#include <algorithm>
#include <string>

#include "kernels/cpu/attention_tile.h"
#include "synapse/error.h"

namespace synapse::cpu {
namespace {

// Floats of a task's stack workspace: the queries and states of its tiles
// and one scratch (TileLayout), for any head_dim up to kMaxAttentionHeadDim.
constexpr int64_t kWorkspaceFloats = 96 * 1024;
// Floats of the caller's stack buffer for chunk states when chunks are
// computed by separate tasks.
constexpr int64_t kSplitFloats = 64 * 1024;
// The most tiles one task of a split holds.
constexpr int64_t kMaxGroupTiles = 64;

// How the queries of a call are cut into tiles: tiles_per_kv tiles of
// tile_queries queries for each kv head, tile index = kv head + kv_heads * n
// (so consecutive indices are the kv heads of the same queries).
struct TilePlan {
  const float* q;
  const int32_t* positions;
  int64_t tokens;
  const ref::StateRows* k;
  const ref::StateRows* v;
  ref::AttentionShape shape;
  int64_t lanes;
  int64_t tile_queries;
  int64_t tiles_per_kv;

  int64_t tiles() const { return shape.kv_heads * tiles_per_kv; }
  // The buffers of the tile with the most queries.
  TileLayout widest() const {
    const int64_t queries = std::min(tile_queries, tokens * (shape.heads / shape.kv_heads));
    return {lanes, (queries + lanes - 1) / lanes, shape.head_dim};
  }

  AttentionTile tile(int64_t index) const {
    AttentionTile t{q, positions, k, v, shape};
    t.kv_head = index % shape.kv_heads;
    t.first = index / shape.kv_heads * tile_queries;
    t.count = std::min(tile_queries, tokens * t.group() - t.first);
    for (int64_t i = t.first; i < t.first + t.count; ++i) t.max_last = std::max(t.max_last, t.last_key(i));
    return t;
  }
};

// Chunks holding a tile's visible keys.
int64_t chunks_of(const AttentionTile& tile) { return tile.max_last < 0 ? 0 : tile.max_last / kChunkKeys + 1; }

// Keys of the block at j0 of chunk c that reads keys up to `last` (0 past
// the chunk or `last`).
int64_t block_keys(int64_t c, int64_t j0, int64_t last) {
  return std::max<int64_t>(0, std::min({kKeyBlock, (c + 1) * kChunkKeys - j0, last + 1 - j0}));
}

// The most queries (a multiple of lanes, at most kMaxTileQueries) whose
// buffers for one tile fit in the workspace.
int64_t tile_queries_for(int64_t head_dim, int64_t lanes) {
  for (int64_t vectors = kMaxTileQueries / lanes; vectors > 1; --vectors) {
    const TileLayout layout{lanes, vectors, head_dim};
    if (layout.queries_floats() + 2 * layout.state_floats() + layout.block_floats() + layout.scores_floats() <=
        kWorkspaceFloats)
      return vectors * lanes;
  }
  return lanes;
}

// A whole tile in one task: chunk by chunk, each merged as it is done.
void attend_tile(const AttentionTileKernel& kernel, const AttentionTile& tile, float* out) {
  alignas(64) float workspace[kWorkspaceFloats];
  const TileLayout layout = tile_layout(tile, kernel.lanes);
  float* queries = workspace;
  float* state = queries + layout.queries_floats();
  float* chunk = state + layout.state_floats();
  float* block = chunk + layout.state_floats();
  float* scores = block + layout.block_floats();
  kernel.load_queries(tile, queries);
  reset_state(layout, state);
  for (int64_t c = 0; c < chunks_of(tile); ++c) {
    reset_state(layout, chunk);
    for (int64_t j0 = c * kChunkKeys; block_keys(c, j0, tile.max_last) > 0; j0 += kKeyBlock) {
      const int64_t n = block_keys(c, j0, tile.max_last);
      const uint64_t holes = kernel.load_block(&tile, 1, j0, n, &block);
      kernel.attend_block(tile, queries, j0, n, holes, block, scores, chunk);
    }
    kernel.merge(tile, chunk, state);
  }
  kernel.finish(tile, state, out);
}

// One chunk of tiles [t_begin, t_end) (kv heads of the same queries): block
// by block, loaded for all the tiles at once so the block's rows are read
// from memory once, then every tile in turn. The state of tile t_begin + t
// goes to states + t * slot.
void attend_chunk_of_tiles(const AttentionTileKernel& kernel, const TilePlan& plan, int64_t c, int64_t t_begin,
                           int64_t t_end, float* states, int64_t slot) {
  alignas(64) float workspace[kWorkspaceFloats];
  const TileLayout widest = plan.widest();
  const int64_t per_tile = widest.queries_floats() + widest.block_floats();
  float* scores = workspace + (t_end - t_begin) * per_tile;
  AttentionTile tiles[kMaxGroupTiles];
  float* blocks[kMaxGroupTiles];
  const int64_t count = t_end - t_begin;
  int64_t last = -1;
  for (int64_t t = 0; t < count; ++t) {
    tiles[t] = plan.tile(t_begin + t);
    blocks[t] = workspace + t * per_tile + widest.queries_floats();
    kernel.load_queries(tiles[t], workspace + t * per_tile);
    reset_state(tile_layout(tiles[t], kernel.lanes), states + t * slot);
    last = std::max(last, tiles[t].max_last);
  }
  for (int64_t j0 = c * kChunkKeys; block_keys(c, j0, last) > 0; j0 += kKeyBlock) {
    const uint64_t holes = kernel.load_block(tiles, count, j0, block_keys(c, j0, last), blocks);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t n = block_keys(c, j0, tiles[t].max_last);
      if (n > 0)
        kernel.attend_block(tiles[t], workspace + t * per_tile, j0, n, holes, blocks[t], scores,
                            states + t * slot);
    }
  }
}

// Few queries over a long context (a decode step), for tiles [first,
// first + count): tasks are (chunk, group of tiles) pairs, in rounds of
// `window` chunks; the caller merges each round's chunk states in chunk
// order, so a tile's result is the same bits as attend_tile's.
void attend_split(const AttentionTileKernel& kernel, const TilePlan& plan, int64_t first, int64_t count,
                  int64_t chunks, int64_t window, int64_t group_tiles, float* out, ThreadPool& pool) {
  alignas(64) float buffer[kSplitFloats];
  const int64_t slot = plan.widest().state_floats();
  const int64_t groups = (count + group_tiles - 1) / group_tiles;
  float* running = buffer;
  float* partial = buffer + count * slot;  // [chunk of the round][tile]
  for (int64_t t = 0; t < count; ++t) reset_state(tile_layout(plan.tile(first + t), plan.lanes), running + t * slot);
  for (int64_t c0 = 0; c0 < chunks; c0 += window) {
    const int64_t round = std::min(window, chunks - c0);
    pool.run([&](int worker, int workers) {
      for (int64_t i = worker; i < round * groups; i += workers) {
        const int64_t t_begin = first + i % groups * group_tiles;
        attend_chunk_of_tiles(kernel, plan, c0 + i / groups, t_begin, std::min(first + count, t_begin + group_tiles),
                              partial + (i / groups * count + t_begin - first) * slot, slot);
      }
    });
    for (int64_t t = 0; t < count; ++t) {
      const AttentionTile tile = plan.tile(first + t);
      for (int64_t c = c0; c < std::min(c0 + round, chunks_of(tile)); ++c)
        kernel.merge(tile, partial + ((c - c0) * count + t) * slot, running + t * slot);
    }
  }
  for (int64_t t = 0; t < count; ++t) kernel.finish(plan.tile(first + t), running + t * slot, out);
}

// Tiles per range of a split (0: no split) when `fit` tiles' states fit
// the split buffer: see causal_attention.
int64_t tiles_per_range(int64_t tiles, int64_t fit, int64_t tiles_per_kv) {
  if (fit >= tiles) return tiles;
  if (fit < 1 || tiles_per_kv > 1) return 0;
  const int64_t ranges = (tiles + fit - 1) / fit;
  return (tiles + ranges - 1) / ranges;
}

}  // namespace

void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const ref::StateRows& k,
                      const ref::StateRows& v, const ref::AttentionShape& shape, float* out, CpuTarget target,
                      ThreadPool& pool) {
  const AttentionTileKernel kernel = attention_tile_kernel(target);
  if (!kernel.lanes) throw Error(ErrorKind::Unsupported, std::string("no attention kernel for ") + to_string(target));
  if (shape.head_dim > kMaxAttentionHeadDim)
    throw Error(ErrorKind::InvalidValue,
                "attention head_dim " + std::to_string(shape.head_dim) + " over the CPU kernel's limit");
  // Throws here, not in a worker, for a head that is not whole blocks.
  row_bytes(k.encoding, static_cast<uint64_t>(shape.head_dim));
  row_bytes(v.encoding, static_cast<uint64_t>(shape.head_dim));
  if (tokens == 0) return;
  const int64_t group = shape.heads / shape.kv_heads;
  const int64_t tile_queries = tile_queries_for(shape.head_dim, kernel.lanes);
  const TilePlan plan{q, positions, tokens, &k, &v, shape, kernel.lanes, tile_queries,
                      (tokens * group + tile_queries - 1) / tile_queries};
  const int64_t tiles = plan.tiles();

  // Few tiles over several chunks: split the chunks over tasks, when the
  // tiles fit one task's workspace and the running states and one chunk's
  // states fit the stack buffer.
  int64_t last = -1;
  for (int64_t t = 0; t < tokens; ++t) last = std::max<int64_t>(last, std::min<int64_t>(positions[t], k.count - 1));
  const int64_t chunks = last < 0 ? 0 : last / kChunkKeys + 1;
  const TileLayout widest = plan.widest();
  // When not all tiles' states fit, a decode step (one tile per kv head)
  // takes the tiles in ranges of equal size that do, one range after the
  // other: a range's tasks read its kv heads' parts of each row together.
  // Tile by tile, a model whose every head has its own kv head read 256
  // bytes of each 4 KiB row per pass (OLMoE-1B-7B's 1-thread decode
  // attention at depth 4096: 6.6 ms a layer so, 4.3 in ranges). A batch's
  // many tiles stay one task each (2-thread prefill attention lost up to
  // 20% in ranges).
  const int64_t range = tiles_per_range(tiles, kSplitFloats / (2 * widest.state_floats()), plan.tiles_per_kv);
  const int64_t fitting_tiles = std::min(
      kMaxGroupTiles, (kWorkspaceFloats - widest.scores_floats()) / (widest.queries_floats() + widest.block_floats()));
  if (chunks >= 2 && range >= 1 && fitting_tiles >= 1 && chunks >= std::min<int64_t>(tiles, pool.size())) {
    for (int64_t first = 0; first < tiles; first += range) {
      const int64_t count = std::min(range, tiles - first);
      const int64_t window = std::min(chunks, kSplitFloats / (count * widest.state_floats()) - 1);
      // Groups of tiles per chunk: as few as fit, as many as give the
      // threads two tasks each per round.
      const int64_t groups = std::clamp<int64_t>((2 * pool.size() + window - 1) / window,
                                                 (count + fitting_tiles - 1) / fitting_tiles, count);
      attend_split(kernel, plan, first, count, chunks, window, (count + groups - 1) / groups, out, pool);
    }
    return;
  }
  // Strided shares: later tiles see more keys, so contiguous shares of a
  // prefill would leave the last worker with most of the work.
  pool.run([&](int worker, int workers) {
    for (int64_t i = worker; i < tiles; i += workers) attend_tile(kernel, plan.tile(i), out);
  });
}

}  // namespace synapse::cpu
