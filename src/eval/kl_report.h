// llama-perplexity's printed statistics for a --kl-divergence run: a line
// per chunk (running PPL, ln(PPL ratio), mean KL divergence, RMS Δp, same
// top token), then the closing blocks (perplexity, KL divergence and token
// probability statistics with percentiles), in its wording, so that the two
// tools' outputs read alike.
#pragma once

#include <cstdint>
#include <string>

#include "eval/kl_divergence.h"

namespace synapse::eval {

std::string kl_chunk_header();
std::string kl_chunk_line(int64_t chunk, const KlSums& sums);
// The closing statistics; fewer than 100 tokens give a line saying so.
std::string kl_summary(const KlResult& result);

}  // namespace synapse::eval
