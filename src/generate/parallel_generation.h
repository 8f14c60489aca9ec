// Several continuations of one prompt, decoded together: the prompt is
// evaluated once, each further sequence forks it (sharing its KV pages),
// and every step evaluates one token of each unfinished sequence in one
// batched pass, so the weights are read once per step for all of them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/session.h"
#include "generate/generation.h"
#include "synapse/sampling.h"

namespace synapse {

// Generates `sequences` continuations of `prompt` from an empty session
// planned for that many logits rows. Continuation i samples with
// params.seed + i when a seed is given (each its own random seed otherwise).
// options.on_token and on_logits are not called. Returns the continuations'
// ids; errors as generate().
std::vector<std::vector<int32_t>> generate_parallel(exec::Session& session, const SamplingParams& params,
                                                    std::span<const int32_t> prompt, int sequences,
                                                    const GenerationOptions& options);

}  // namespace synapse
