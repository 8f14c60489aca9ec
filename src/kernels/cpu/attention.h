// Causal attention on the CPU, flash style: the queries sharing a kv head
// are cut into tiles (attention_tile.h); a tile reads each block of keys and
// values once, converted to f32, for all its queries, with an online
// softmax over key blocks and chunks, so no score buffer over the whole
// context is needed. Tasks for the pool are tiles, or, when there are too
// few tiles for the threads (a decode step), (tile, chunk of keys) pairs
// whose states are merged in chunk order. A query's result depends only on
// its position and the stored keys and values: never on the other tokens
// of the batch, nor on the thread count.
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_target.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/ref/attention.h"

namespace synapse::cpu {

inline constexpr int64_t kMaxAttentionHeadDim = 512;

// Same contract as ref::causal_attention, for head_dim <= kMaxAttentionHeadDim.
void causal_attention(const float* q, const int32_t* positions, int64_t tokens, const ref::StateRows& k,
                      const ref::StateRows& v, const ref::AttentionShape& shape, float* out, CpuTarget target,
                      ThreadPool& pool);

}  // namespace synapse::cpu
