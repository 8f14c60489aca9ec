// One-token (decode) products over the quantized encodings, single thread,
// for every CPU target this machine runs, as matmul runs them: whole
// passes of the kernel's matrix-vector product, the other rows (or 4
// tokens) through the tiles. The rate reported is weight bytes streamed
// per second: a matvec is bound by it, so compare it with synapse-membw.
// "l2" matrices (96 rows: 260-500 KB) stay in this core's L2, "model" is
// one 896x4864 projection (in L3), "dram" cycles through copies of it that
// together exceed the last-level cache.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_operands.h"
#include "kernels/cpu/dot_kernel.h"
#include "encoding/encoding.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kCols = 4864;  // a multiple of every block size

struct MatrixCase {
  const char* name;
  int64_t rows;
  int copies;  // distinct matrices visited in turn
  int64_t cols = kCols;
};

// "dram-short": short rows (Qwen2.5-0.5B's 896-wide gate and up
// projections), which the hardware prefetcher follows worst.
constexpr MatrixCase kCases[] = {
    {"l2", 96, 1}, {"model", 896, 1}, {"dram", 896, 96}, {"dram-short", 4864, 24, 1024}};

void matvec(benchmark::State& state, Encoding encoding, CpuTarget target, MatrixCase shape, int tokens) {
  const DotKernel kernel = find_dot_kernel(encoding, target);
  const int64_t cols = shape.cols;
  const BenchOperands o = bench_operands(encoding, kernel.activation, shape.rows, cols, shape.copies, tokens);
  const uint64_t w_stride = o.w_stride, matrix_bytes = o.matrix_bytes, x_stride = o.x_stride;
  const std::vector<uint8_t>& x = o.x;
  std::vector<float> y(shape.rows * tokens);

  int copy = 0;
  for (auto _ : state) {
    const uint8_t* w = o.matrix(copy);
    int64_t first = 0;  // as matmul: whole matrix-vector passes, then tiles
    if (tokens == 1 && kernel.matvec) {
      first = shape.rows / kernel.matvec_rows * kernel.matvec_rows;
      kernel.matvec(w, w_stride, first, x.data(), cols, y.data());
    }
    for (int64_t r = first; r < shape.rows; r += kMaxTileRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kMaxTileRows, shape.rows - r));
      kernel.tile(w + r * w_stride, w_stride, rows, x.data(), x_stride, tokens, cols, y.data() + r, shape.rows);
    }
    benchmark::DoNotOptimize(y.data());
    copy = (copy + 1) % shape.copies;
  }
  state.counters["weights"] = benchmark::Counter(
      static_cast<double>(matrix_bytes), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const int kRegistered = [] {
  for (Encoding encoding : {Encoding::Q8_0, Encoding::Q4_0, Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K, Encoding::F16,
                            Encoding::BF16, Encoding::F32}) {
    for (CpuTarget target : supported_cpu_targets()) {
      if (!find_dot_kernel(encoding, target).tile) continue;
      for (const MatrixCase& shape : kCases) {
        for (int tokens : {1, kMaxTileTokens}) {
          const std::string name = std::string("matvec/") + encoding_info(encoding).name + "/" +
                                   to_string(target) + "/" + shape.name + "/tokens:" + std::to_string(tokens);
          benchmark::RegisterBenchmark(name.c_str(), matvec, encoding, target, shape, tokens);
        }
      }
    }
  }
  return 0;
}();

}  // namespace
}  // namespace synapse::cpu
