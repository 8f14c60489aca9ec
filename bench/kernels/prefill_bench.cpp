// Products of a few to many tokens (prefill, batched decode, speculative
// verification) over the block encodings, single thread, for every CPU
// target this machine runs, in int8 multiply-adds per second ("macs",
// GMAC/s), through each path matmul may take: "matvec" the matrix-vector
// kernel token after token on blocks of rows (up to the kernel's
// matvec_max_tokens), "tiles" the 4 x 4 tiles, "wide" the kernel's 4 x 8
// wide tile (the rest through the tiles), "panel" the kernel's panel (from
// panel_min_tokens); side by side they give those thresholds.
// Cases: "l3" is one 896 x 4864 projection (it stays in L3 and the products
// are bound by arithmetic), "dram" copies of it visited in turn, together
// past the last-level cache (few tokens: the products wait on memory).
// One-token products are in matvec_bench.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_operands.h"
#include "encoding/encoding.h"
#include "kernels/cpu/dot_kernel.h"
#include "kernels/cpu/matmul.h"

namespace synapse::cpu {
namespace {

constexpr int64_t kRows = 896, kCols = 4864;  // a multiple of every block size

struct MatrixCase {
  const char* name;
  int copies;  // distinct matrices visited in turn
};
constexpr MatrixCase kCases[] = {{"l3", 1}, {"dram", 24}};

enum class Path { Matvec, Tiles, Wide, Panel };
const char* name_of(Path path) {
  switch (path) {
    case Path::Matvec: return "matvec";
    case Path::Tiles: return "tiles";
    case Path::Wide: return "wide";
    case Path::Panel: return "panel";
  }
  return "";
}

void prefill(benchmark::State& state, Encoding encoding, CpuTarget target, Path path, MatrixCase shape, int tokens) {
  constexpr int64_t kTokenBlock = 64;  // as matmul
  const DotKernel kernel = find_dot_kernel(encoding, target);
  const BenchOperands o = bench_operands(encoding, kernel.activation, kRows, kCols, shape.copies, tokens);
  const uint64_t w_stride = o.w_stride, x_stride = o.x_stride;
  const std::vector<uint8_t>& x = o.x;
  std::vector<float> y(kRows * tokens);

  int copy = 0;
  for (auto _ : state) {
    const uint8_t* w = o.matrix(copy);
    if (path == Path::Matvec) {
      const int64_t block = static_cast<int64_t>(kMatvecBlockBytes / w_stride) / kernel.matvec_rows * kernel.matvec_rows;
      for (int64_t r = 0; r < kRows; r += block)
        for (int t = 0; t < tokens; ++t)
          kernel.matvec(w + r * w_stride, w_stride, std::min(block, kRows - r), x.data() + t * x_stride, kCols,
                        y.data() + t * kRows + r);
    } else if (path == Path::Panel) {
      for (int64_t r = 0; r < kRows; r += kPanelRows)
        kernel.panel(w + r * w_stride, w_stride, kPanelRows, x.data(), x_stride, tokens, kCols, y.data() + r, kRows);
    } else {
      for (int64_t t0 = 0; t0 < tokens; t0 += kTokenBlock)
        for (int64_t r = 0; r < kRows; r += kMaxTileRows)
          for (int64_t t = t0, end = std::min<int64_t>(tokens, t0 + kTokenBlock); t < end;) {
            const bool wide = path == Path::Wide && end - t >= kWideTileTokens;
            const int count = wide ? kWideTileTokens : static_cast<int>(std::min<int64_t>(kMaxTileTokens, end - t));
            (wide ? kernel.wide_tile : kernel.tile)(w + r * w_stride, w_stride, kMaxTileRows, x.data() + t * x_stride,
                                                    x_stride, count, kCols, y.data() + t * kRows + r, kRows);
            t += count;
          }
    }
    benchmark::DoNotOptimize(y.data());
    copy = (copy + 1) % shape.copies;
  }
  state.counters["macs"] = benchmark::Counter(static_cast<double>(kRows * kCols * tokens),
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const int kRegistered = [] {
  for (Encoding encoding : {Encoding::Q8_0, Encoding::Q4_0, Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K}) {
    for (CpuTarget target : supported_cpu_targets()) {
      const DotKernel kernel = find_dot_kernel(encoding, target);
      if (!kernel.tile) continue;
      for (const MatrixCase& shape : kCases) {
        for (int tokens : {2, 4, 6, 8, 12, 16, 24, 64, 512}) {
          for (Path path : {Path::Matvec, Path::Tiles, Path::Wide, Path::Panel}) {
            if ((path == Path::Panel && !kernel.panel) || (path == Path::Matvec && !kernel.matvec) ||
                (path == Path::Wide && !kernel.wide_tile))
              continue;
            const std::string name = std::string("prefill/") + encoding_info(encoding).name + "/" +
                                     to_string(target) + "/" + name_of(path) + "/" + shape.name +
                                     "/tokens:" + std::to_string(tokens);
            benchmark::RegisterBenchmark(name.c_str(), prefill, encoding, target, path, shape, tokens);
          }
        }
      }
    }
  }
  return 0;
}();

}  // namespace
}  // namespace synapse::cpu
