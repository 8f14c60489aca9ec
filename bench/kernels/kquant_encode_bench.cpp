// K-quant encoding (quantize_row to Q4_K, Q5_K, Q6_K), single thread, over
// 4 MiB of normally distributed floats in rows of 4096: the reference
// codec ("reference", the scalar code ggml's bytes come from) beside the
// SIMD encoders of every CPU target this machine runs, which write the same
// bytes. Reports ns per element.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "encoding/codecs.h"
#include "encoding/encoding.h"
#include "kernels/cpu/kquant_encode.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kCols = 4096;
constexpr int64_t kRows = 256;  // 4 MiB of floats

const std::vector<float>& normal_rows() {
  static const std::vector<float> values = [] {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 0.02f);  // about a weight matrix's spread
    std::vector<float> v(kRows * kCols);
    for (float& x : v) x = normal(rng);
    return v;
  }();
  return values;
}

void encode(benchmark::State& state, Encoding encoding, codecs::QuantizeFn quantize) {
  const std::vector<float>& x = normal_rows();
  const uint64_t out_stride = row_bytes(encoding, kCols);
  const int64_t blocks_per_row = kCols / encoding_info(encoding).block_elems;
  std::vector<uint8_t> out(out_stride * kRows);
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) quantize(x.data() + r * kCols, out.data() + r * out_stride, blocks_per_row);
    benchmark::DoNotOptimize(out.data());
  }
  // The inverted rate of elements: seconds per element (printed in ns).
  state.counters["per_elem"] = benchmark::Counter(static_cast<double>(kRows * kCols),
                                                  benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
}

struct Format {
  Encoding encoding;
  codecs::QuantizeFn reference;
  codecs::QuantizeFn (*fast)(CpuTarget);
};

const int kRegistered = [] {
  const Format formats[] = {{Encoding::Q4_K, codecs::quantize_q4_k, q4_k_encoder},
                            {Encoding::Q5_K, codecs::quantize_q5_k, q5_k_encoder},
                            {Encoding::Q6_K, codecs::quantize_q6_k, q6_k_encoder}};
  for (const Format& f : formats) {
    const std::string prefix = std::string("kquant_encode/") + encoding_info(f.encoding).name + "/";
    benchmark::RegisterBenchmark((prefix + "reference").c_str(), encode, f.encoding, f.reference)
        ->Unit(benchmark::kMillisecond);
    for (CpuTarget target : supported_cpu_targets()) {
      benchmark::RegisterBenchmark((prefix + to_string(target)).c_str(), encode, f.encoding, f.fast(target))
          ->Unit(benchmark::kMillisecond);
    }
  }
  return 0;
}();

}  // namespace
}  // namespace synapse::cpu
