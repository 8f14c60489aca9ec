// Causal attention on the CPU: each (token, head) query is one task for the
// pool; keys are visited in blocks with an online softmax (a running max
// and sum rescale the partial output), so no score buffer over the whole
// context is needed. A query's result depends only on its position and the
// stored keys and values, never on the other tokens of the batch.
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
