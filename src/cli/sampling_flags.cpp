#include "cli/sampling_flags.h"

#include <CLI/CLI.hpp>

namespace synapse::cli {

void add_sampling_flags(CLI::App& app, SamplingFlags& flags) {
  app.add_option("--temp", flags.params.temp, "temperature (0: greedy)");
  app.add_option("--top-k", flags.params.top_k, "top-k sampling (0: off)");
  app.add_option("--top-p", flags.params.top_p, "top-p sampling (1: off)");
  app.add_option("--min-p", flags.params.min_p, "min-p sampling (0: off)");
  app.add_option("--repeat-penalty", flags.params.repeat_penalty, "repetition penalty (1: off)");
  app.add_option("--repeat-last-n", flags.params.repeat_last_n, "tokens the penalty looks back");
  app.add_option("-s,--seed", flags.seed, "random seed (-1: random)");
}

SamplingParams sampling_params(const SamplingFlags& flags) {
  SamplingParams params = flags.params;
  if (flags.seed >= 0) params.seed = static_cast<uint32_t>(flags.seed);
  return params;
}

}  // namespace synapse::cli
