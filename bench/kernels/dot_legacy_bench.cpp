// Prefill products (many tokens) over Q8_0 / Q4_0 weights, single thread,
// for every CPU target this machine runs, in int8 multiply-adds per second
// ("macs", GMAC/s): they are bound by arithmetic. "tiles" runs the 4x4
// tiles as matmul does below kPanelMinTokens tokens, "panel" the kernel's
// panel. One-token products are in matvec_bench.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/dot_kernel.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kCols = 4864;

// A 896 x 4864 projection against `tokens` tokens, through the 4 x 4 tiles
// (tokens blocked by 64 as in matmul) or through the panel.
void prefill(benchmark::State& state, Encoding encoding, CpuTarget target, bool use_panel, int tokens) {
  constexpr int64_t kRows = 896, kTokenBlock = 64;
  const DotKernel kernel = find_dot_kernel(encoding, target);
  const uint64_t w_stride = row_bytes(encoding, kCols);
  const uint64_t x_stride = activation_row_bytes(kernel.activation, kCols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(kCols);
  std::vector<uint8_t> weights(w_stride * kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : values) v = uniform(rng);
    quantize_row(encoding, values.data(), weights.data() + r * w_stride, kCols);
  }
  std::vector<uint8_t> x(x_stride * tokens);
  for (int t = 0; t < tokens; ++t) {
    for (float& v : values) v = uniform(rng);
    quantize_activation_row(kernel.activation, values.data(), kCols, x.data() + t * x_stride);
  }
  std::vector<float> y(kRows * tokens);
  for (auto _ : state) {
    if (use_panel) {
      for (int64_t r = 0; r < kRows; r += kPanelRows)
        kernel.panel(weights.data() + r * w_stride, w_stride, kPanelRows, x.data(), x_stride, tokens, kCols,
                     y.data() + r, kRows);
    } else {
      for (int64_t t0 = 0; t0 < tokens; t0 += kTokenBlock)
        for (int64_t r = 0; r < kRows; r += kMaxTileRows)
          for (int64_t t = t0; t < std::min<int64_t>(tokens, t0 + kTokenBlock); t += kMaxTileTokens)
            kernel.tile(weights.data() + r * w_stride, w_stride, kMaxTileRows, x.data() + t * x_stride, x_stride,
                        static_cast<int>(std::min<int64_t>(kMaxTileTokens, tokens - t)), kCols, y.data() + t * kRows + r,
                        kRows);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["macs"] = benchmark::Counter(static_cast<double>(kRows * kCols * tokens),
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const int kRegistered = [] {
  for (Encoding encoding : {Encoding::Q8_0, Encoding::Q4_0}) {
    for (CpuTarget target : supported_cpu_targets()) {
      const DotKernel kernel = find_dot_kernel(encoding, target);
      if (!kernel.tile) continue;
      for (int tokens : {kPanelMinTokens, 64, 512}) {
        for (bool use_panel : {false, true}) {
          if (use_panel && !kernel.panel) continue;
          const std::string name = std::string("legacy-prefill/") + encoding_info(encoding).name +
                                   "/" + to_string(target) + "/" + (use_panel ? "panel" : "tiles") +
                                   "/tokens:" + std::to_string(tokens);
          benchmark::RegisterBenchmark(name.c_str(), prefill, encoding, target, use_panel, tokens);
        }
      }
    }
  }
  return 0;
}();

}  // namespace
}  // namespace synapse::cpu
