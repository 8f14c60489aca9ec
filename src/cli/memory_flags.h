// Flags that bound a session's memory: --mem-budget SIZE (bytes, "2G", or a
// share of the model's weights, "40%"), --cache-policy for paged weights,
// --prefetch (regions loaded ahead), --no-direct-io, and how the KV cache
// stores keys and values: --cache-type-k / --cache-type-v f16|q8_0|f32
// (llama.cpp's flags).
#pragma once

#include <string>

#include "exec/session.h"

namespace CLI {
class App;
}

namespace synapse::cli {

struct MemoryFlags {
  std::string budget;  // empty: no budget
  std::string policy = "lfu";
  int prefetch = 2;
  bool no_direct_io = false;
  std::string cache_type_k = "f16";
  std::string cache_type_v = "f16";
};

void add_memory_flags(CLI::App& app, MemoryFlags& flags);

// Sets options.memory from the flags, with a progress report for loading
// the pinned weights. Without --mem-budget, a model whose weights do not fit
// in the memory the process may use gets memory::default_budget (said on
// stderr). Throws Error(Usage) for a budget that does not parse.
void apply_memory_flags(const MemoryFlags& flags, const Model& model, exec::SessionOptions& options);

// When the session pages weights: on stderr, what paging did over `tokens`
// evaluated tokens (bytes loaded per token, hit rate, prefetch accuracy,
// peak resident weights).
void print_memory_stats(const exec::Session& session, int64_t tokens);

}  // namespace synapse::cli
