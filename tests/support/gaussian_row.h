// A row of standard normal values from a seeded Mersenne Twister: the
// encoders' tests quantize it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace synapse::test {

inline std::vector<float> gaussian_row(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

}  // namespace synapse::test
