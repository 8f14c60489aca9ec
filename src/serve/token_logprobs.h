// Log-probabilities from a logits row: the model's own distribution (before
// temperature, top-k and the other samplers), as llama-server reports them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "serve/job.h"

namespace synapse::serve {

// Sets token.logprob for token.id and token.top to the `top` most likely ids
// (descending, ties to the lower id).
void fill_logprobs(std::span<const float> logits, int top, TokenOut& token);

}  // namespace synapse::serve
