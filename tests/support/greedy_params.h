// Greedy sampling (temperature 0): the parameters the generation tests pick
// tokens with when they compare runs token for token.
#pragma once

#include "synapse/sampling.h"

namespace synapse::test {

inline SamplingParams greedy() {
  SamplingParams params;
  params.temp = 0.0f;
  return params;
}

}  // namespace synapse::test
