// Library-independent inputs for the golden-hash parity tests against ggml
// (the hashes come from the pinned peer's libggml-base on these inputs).
#pragma once

#include <cstdint>
#include <vector>

namespace synapse::test {

// xorshift32 values in [-1, 1).
class ParityNoise {
 public:
  float next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 17;
    s_ ^= s_ << 5;
    return static_cast<float>(s_ >> 8) * 0x1p-23f - 1.0f;
  }

 private:
  uint32_t s_ = 0x12345678u;
};

// Noise whose scale changes per 32-element block, two outliers, an all-zero
// block and a negative block (n >= 1024).
inline std::vector<float> parity_row(int64_t n) {
  ParityNoise noise;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = noise.next() * 0.05f * static_cast<float>(1 + (i / 32) % 7);
  x[5] = 3.0f;
  x[700] = -4.5f;
  for (int64_t i = 256; i < 288; ++i) x[i] = 0.0f;
  for (int64_t i = 512; i < 544; ++i) x[i] = -0.25f - 0.001f * static_cast<float>(i % 5);
  return x;
}

// Importance for a row of n: positive values spanning three decades, with
// a block of zeros (columns 64-95) and one dominant column (600).
inline std::vector<float> parity_importance(int64_t n) {
  ParityNoise noise;
  std::vector<float> w(n);
  for (int64_t i = 0; i < n; ++i) w[i] = 0.01f + 5.0f * (noise.next() + 1.0f) * (noise.next() + 1.0f);
  for (int64_t i = 64; i < 96; ++i) w[i] = 0.0f;
  w[600] = 1000.0f;
  return w;
}

}  // namespace synapse::test
