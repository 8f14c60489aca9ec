// Causal attention over an F16 KV cache of model shapes, best CPU target:
//   decode: one token at the end of a context of `depth` keys (time per
//           layer of a decode step at that depth);
//   chunk:  a 512-token prompt step (the default ubatch) at the end of a
//           context of `depth` keys.
// Arguments: depth, threads. Keys/s counts the (query head, visible key)
// pairs scored.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "kernels/cpu/attention.h"

namespace synapse::cpu {
namespace {

struct Shape {
  const char* name;
  int64_t heads, kv_heads, head_dim;
};
constexpr Shape kShapes[] = {{"qwen2.5-0.5b", 14, 2, 64}, {"llama-3.2-1b", 32, 8, 64}, {"olmoe-1b-7b", 16, 16, 128}};

constexpr int64_t kPageRows = 256;

// `count` rows of random F16 in pages, as a KV cache holds them.
struct F16Rows {
  std::vector<std::vector<uint8_t>> pages;
  std::vector<const uint8_t*> page_ptrs;
  ref::StateRows view;

  F16Rows(int64_t count, int64_t width, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const uint64_t row_size = row_bytes(Encoding::F16, static_cast<uint64_t>(width));
    std::vector<float> row(static_cast<size_t>(width));
    for (int64_t first = 0; first < count; first += kPageRows) {
      pages.emplace_back(static_cast<size_t>(kPageRows) * row_size);
      for (int64_t r = 0; r < kPageRows; ++r) {
        for (float& value : row) value = normal(rng);
        quantize_row(Encoding::F16, row.data(), pages.back().data() + r * row_size, width);
      }
    }
    for (auto& page : pages) page_ptrs.push_back(page.data());
    view = {page_ptrs.data(), nullptr, kPageRows, width, count, Encoding::F16, row_size};
  }
};

void attention(benchmark::State& state, Shape shape, int64_t tokens) {
  const int64_t depth = state.range(0);
  ThreadPool pool(static_cast<int>(state.range(1)));
  const ref::AttentionShape s{shape.heads, shape.kv_heads, shape.head_dim, 1.0f / std::sqrt(float(shape.head_dim))};
  const F16Rows k(depth, shape.kv_heads * shape.head_dim, 1), v(depth, shape.kv_heads * shape.head_dim, 2);
  std::vector<float> q(static_cast<size_t>(tokens * shape.heads * shape.head_dim), 0.5f);
  std::vector<float> out(q.size());
  std::vector<int32_t> positions(static_cast<size_t>(tokens));
  int64_t pairs = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    positions[t] = static_cast<int32_t>(depth - tokens + t);
    pairs += (positions[t] + 1) * shape.heads;
  }
  for (auto _ : state) {
    causal_attention(q.data(), positions.data(), tokens, k.view, v.view, s, out.data(), best_cpu_target(), pool);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["keys"] = benchmark::Counter(static_cast<double>(pairs), benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (const Shape& shape : kShapes) {
    benchmark::RegisterBenchmark((std::string("attention/decode/") + shape.name).c_str(), attention, shape, 1)
        ->ArgsProduct({{4096, 32768}, {1, 2}})
        ->ArgNames({"depth", "threads"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("attention/chunk/") + shape.name).c_str(), attention, shape, 512)
        ->ArgsProduct({{8192}, {1, 2}})
        ->ArgNames({"depth", "threads"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

const int registered = (register_all(), 0);

}  // namespace
}  // namespace synapse::cpu
