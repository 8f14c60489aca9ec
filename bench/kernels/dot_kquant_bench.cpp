// Q4_K / Q5_K / Q6_K prefill products on every target this machine runs,
// single thread: a 128 x 4864 slice of Qwen2-0.5B's MLP down projection
// against 2 to 64 tokens, through the tiles or the panel, in int8
// multiply-adds per second. One-token products are in matvec_bench.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/cpu_target.h"
#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kCols = 4864;
std::vector<float> random_floats(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  return values;
}

// Prefill: the 128-row slice against `tokens` tokens, through the 4 x 4
// tiles as matmul runs them, or through
// the kernel's panel where it has one; reports int8 multiply-adds per
// second ("macs").
void bm_prefill(benchmark::State& state, Encoding encoding, CpuTarget target, bool use_panel, int tokens) {
  constexpr int64_t kRows = 128;
  const int kTokens = tokens;
  const DotKernel kernel = find_dot_kernel(encoding, target);
  const uint64_t w_stride = row_bytes(encoding, kCols);
  std::vector<uint8_t> w(w_stride * kRows);
  const std::vector<float> weights = random_floats(kRows * kCols, 1);
  for (int64_t r = 0; r < kRows; ++r) quantize_row(encoding, weights.data() + r * kCols, w.data() + r * w_stride, kCols);
  const uint64_t x_stride = activation_row_bytes(kernel.activation, kCols);
  std::vector<uint8_t> x(kTokens * x_stride);
  const std::vector<float> activations = random_floats(kTokens * kCols, 2);
  for (int t = 0; t < kTokens; ++t)
    quantize_activation_row(kernel.activation, activations.data() + t * kCols, kCols, x.data() + t * x_stride);
  std::vector<float> y(kTokens * kRows);
  for (auto _ : state) {
    if (use_panel) {
      for (int64_t r = 0; r < kRows; r += kPanelRows)
        kernel.panel(w.data() + r * w_stride, w_stride, kPanelRows, x.data(), x_stride, kTokens, kCols, y.data() + r,
                     kRows);
    } else {
      for (int64_t r = 0; r < kRows; r += kMaxTileRows)
        for (int t = 0; t < kTokens; t += kMaxTileTokens)
          kernel.tile(w.data() + r * w_stride, w_stride, kMaxTileRows, x.data() + t * x_stride, x_stride,
                      std::min(kMaxTileTokens, kTokens - t), kCols, y.data() + t * kRows + r, kRows);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["macs"] = benchmark::Counter(static_cast<double>(kRows * kCols * kTokens),
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const bool kRegistered = [] {
  for (Encoding encoding : {Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K}) {
    for (CpuTarget target : supported_cpu_targets()) {
      if (!find_dot_kernel(encoding, target).tile) continue;
      for (int tokens : {2, 4, 8, 12, kPanelMinTokens, 20, 24, 32, 64}) {
        for (bool use_panel : {false, true}) {
          if (use_panel && !find_dot_kernel(encoding, target).panel) continue;
          const std::string name = std::string("kquant-prefill/") +
                                   encoding_info(encoding).name + "/" + to_string(target) +
                                   (use_panel ? "/panel" : "/tiles") + "/tokens:" + std::to_string(tokens);
          benchmark::RegisterBenchmark(name.c_str(), bm_prefill, encoding, target, use_panel, tokens);
        }
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace synapse::cpu
