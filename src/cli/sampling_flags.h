// The sampling flags `run` and `chat` share, named as in llama.cpp.
#pragma once

#include <cstdint>

#include "synapse/sampling.h"

namespace CLI {
class App;
}

namespace synapse::cli {

struct SamplingFlags {
  SamplingParams params;
  int64_t seed = -1;  // -1: random
};

// --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n -s/--seed
void add_sampling_flags(CLI::App& app, SamplingFlags& flags);

// The parameters with the seed applied and --repeat-last-n -1 resolved
// (ctx_flag: the command's -c, 0 for the model's context).
SamplingParams sampling_params(const SamplingFlags& flags, int32_t ctx_flag);

}  // namespace synapse::cli
