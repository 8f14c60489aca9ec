#include "cli/sampling_flags.h"

#include <CLI/CLI.hpp>

#include "model/model.h"

namespace synapse::cli {

void add_sampling_flags(CLI::App& app, SamplingFlags& flags) {
  app.add_option("--temp", flags.params.temp, "temperature (0: greedy)");
  app.add_option("--top-k", flags.params.top_k, "top-k sampling (0: off)");
  app.add_option("--top-p", flags.params.top_p, "top-p sampling (1: off)");
  app.add_option("--min-p", flags.params.min_p, "min-p sampling (0: off)");
  app.add_option("--repeat-penalty", flags.params.repeat_penalty, "repetition penalty (1: off)");
  app.add_option("--repeat-last-n", flags.params.repeat_last_n, "tokens the penalty looks back (-1: the context)")
      ->check(CLI::Range(-1, 1 << 20));
  app.add_option("-s,--seed", flags.seed, "random seed (-1: random)");
}

SamplingParams sampling_params(const SamplingFlags& flags, int32_t ctx_flag) {
  SamplingParams params = flags.params;
  // The context -c asks for, or the most the model's own (0) can be: as
  // long as the context or longer, the window sees every token.
  if (params.repeat_last_n == -1) params.repeat_last_n = ctx_flag > 0 ? ctx_flag : static_cast<int32_t>(kDefaultMaxCtx);
  if (flags.seed >= 0) params.seed = static_cast<uint32_t>(flags.seed);
  return params;
}

}  // namespace synapse::cli
