// Mixture-of-experts routing: top-k gates and the gated sum of expert outputs.
#pragma once

#include <cstdint>
#include <span>

#include "ir/attributes.h"

namespace synapse::ref {

// scores [tokens, experts] -> gates [tokens, experts]: each token keeps its k
// highest scores (equal scores: the lower index), renormalised to sum 1 when
// route.normalize_top_k, the rest zero. With a capacity, an expert takes
// tokens in order until full; later tokens lose that choice. scratch holds
// 2 * experts entries.
void top_k_route(const float* scores, int64_t tokens, int64_t experts, const ir::TopKRoute& route, float* gates,
                 std::span<uint32_t> scratch);

// y[t, :] += gates[t, column] * x[t, :] for t < tokens; gates has
// gate_columns columns, x and y are [tokens, width].
void add_gated(const float* gates, int64_t gate_columns, int64_t column, const float* x, int64_t tokens,
               int64_t width, float* y);

}  // namespace synapse::ref
