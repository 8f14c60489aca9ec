// Floors under the one-token products on this core: what a product over a
// cache-resident matrix in its GGUF layout costs before the rest of its
// work, on the matvec bench's "l2" operands (96 rows of 4864 columns),
// walked as the AVX-512 VNNI matvecs walk them: eight rows per pass, their
// steps side by side. Levels, each adding to the one before:
// - `loads`: the loads a kernel cannot do without (the qs of each row's
//   step, as the kernel loads them), each folded into a vpdpbusd so that
//   none is dead code;
// - `products`: the fewest int8 products that give every level its
//   activation (Q8_0: the sign flip and one vpdpbusd per 64 bytes; Q4_K:
//   the nibbles split, one vpdpbusd per 64 levels), no scale, no sum;
// - `sums` (Q8_0): each (row, block)'s exact int32 sum in a lane of its
//   own, by the matvec's own reduction tree, then two fmas. Batch
//   invariance asks for these sums (the float steps go block by block).
// The kernel's `matvec/.../l2/tokens:1` time over a floor's is the share
// the rest of its work takes (for Q8_0 past `sums`: the scales and the
// float steps); a target rate above a floor is out of reach on this core
// for any kernel that does that floor's work. Same unit as the matvec
// bench: weight bytes per second.
//
// The floors are written here with intrinsics, compiled for AVX-512 VNNI
// through a function attribute, and registered only on a CPU that runs it.

// GCC 12 reports its own _mm512_undefined_* idiom in the AVX-512 headers as
// (maybe-)uninitialized (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>
#include <string>

#include "bench_operands.h"
#include "encoding/encoding.h"
#include "kernels/cpu/cpu_target.h"
#include "kernels/cpu/dot_kernel.h"

#define SYNAPSE_FLOOR_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

namespace synapse::cpu {
namespace {

constexpr int64_t kRows = 96;
constexpr int64_t kCols = 4864;
constexpr int kPassRows = 8;

enum class FloorLevel { kLoads, kProducts, kSums };

// Whatever the accumulators hold, as one number (so none is dead code).
SYNAPSE_FLOOR_TARGET int64_t total(const __m512i (&acc)[kPassRows]) {
  __m512i sum = acc[0];
  for (int r = 1; r < kPassRows; ++r) sum = _mm512_add_epi32(sum, acc[r]);
  return _mm512_reduce_add_epi32(sum);
}

// The lanes of each quarter of a, b, c, d summed into lanes 0-3 of that
// quarter (a's in lane 0): the Q8_0 matvec's first reduction.
SYNAPSE_FLOOR_TARGET __m512i quarter_sums(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}

// Q8_0 (34-byte blocks, the fp16 scale first): a step is two blocks of
// each row, their qs read as two 32-byte loads put side by side.
template <FloorLevel kLevel>
SYNAPSE_FLOOR_TARGET int64_t q8_0_floor(const uint8_t* w, uint64_t w_stride, const uint8_t* x) {
  constexpr uint64_t kPairBytes = 68;
  const int64_t steps = kCols / 64;
  const __m512i xq = _mm512_loadu_si512(x);
  const __m512i sign_flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i even_quarters = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i odd_quarters = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  __m512i acc[kPassRows];
  for (__m512i& a : acc) a = _mm512_setzero_si512();
  __m256 float_acc = _mm256_setzero_ps();
  for (int64_t r0 = 0; r0 < kRows; r0 += kPassRows) {
    for (int64_t s = 0; s < steps; ++s) {
      __m512i sums[kPassRows];
      for (int r = 0; r < kPassRows; ++r) {
        const uint8_t* step = w + (r0 + r) * w_stride + s * kPairBytes;
        const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(step + 2));
        const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(step + 36));
        __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
        if constexpr (kLevel != FloorLevel::kLoads) q = _mm512_xor_si512(q, sign_flip);
        if constexpr (kLevel == FloorLevel::kSums) sums[r] = _mm512_dpbusd_epi32(xq, q, xq);
        else acc[r] = _mm512_dpbusd_epi32(acc[r], q, xq);
      }
      if constexpr (kLevel == FloorLevel::kSums) {
        // The exact sum of each (row, block) in a lane of its own, as the
        // kernel's tree gives them, and those 16 sums into two fmas.
        const __m512i a4 = quarter_sums(sums[0], sums[1], sums[2], sums[3]);
        const __m512i b4 = quarter_sums(sums[4], sums[5], sums[6], sums[7]);
        const __m512 values = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_permutex2var_epi64(a4, even_quarters, b4),
                                                                  _mm512_permutex2var_epi64(a4, odd_quarters, b4)));
        float_acc = _mm256_fmadd_ps(_mm512_castps512_ps256(values), _mm512_castps512_ps256(values), float_acc);
        float_acc = _mm256_fmadd_ps(_mm512_extractf32x8_ps(values, 1), _mm512_extractf32x8_ps(values, 1), float_acc);
      }
    }
  }
  return total(acc) + static_cast<int64_t>(_mm256_cvtss_f32(float_acc));
}

// Q4_K (144-byte super-blocks of 256 levels, the nibbles from byte 16): a
// step is one super-block of each row, its 128 qs bytes as two 64-byte
// loads; the products split each into low and high nibbles.
template <FloorLevel kLevel>
SYNAPSE_FLOOR_TARGET int64_t q4_k_floor(const uint8_t* w, uint64_t w_stride, const uint8_t* x) {
  constexpr uint64_t kSuperBlockBytes = 144;
  constexpr uint64_t kQsOffset = 16;
  const int64_t steps = kCols / 256;
  __m512i xq[4];
  for (int g = 0; g < 4; ++g) xq[g] = _mm512_loadu_si512(x + 64 * g);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  __m512i acc[kPassRows];
  for (__m512i& a : acc) a = _mm512_setzero_si512();
  for (int64_t r0 = 0; r0 < kRows; r0 += kPassRows) {
    for (int64_t s = 0; s < steps; ++s) {
      for (int r = 0; r < kPassRows; ++r) {
        const uint8_t* qs = w + (r0 + r) * w_stride + s * kSuperBlockBytes + kQsOffset;
        for (int half = 0; half < 2; ++half) {
          const __m512i v = _mm512_loadu_si512(qs + 64 * half);
          if constexpr (kLevel == FloorLevel::kLoads) {
            acc[r] = _mm512_dpbusd_epi32(acc[r], v, xq[2 * half]);
          } else {
            acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_and_si512(v, low4), xq[2 * half]);
            acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_and_si512(_mm512_srli_epi16(v, 4), low4), xq[2 * half + 1]);
          }
        }
      }
    }
  }
  return total(acc);
}

using Floor = int64_t (*)(const uint8_t* w, uint64_t w_stride, const uint8_t* x);

void floor_bench(benchmark::State& state, Encoding encoding, Floor floor) {
  const DotKernel kernel = find_dot_kernel(encoding, CpuTarget::Avx512Vnni);
  const BenchOperands o = bench_operands(encoding, kernel.activation, kRows, kCols, 1, 1);
  // The floors read the activation row's first 256 bytes as plain bytes.
  for (auto _ : state) benchmark::DoNotOptimize(floor(o.matrix(0), o.w_stride, o.x.data()));
  state.counters["weights"] = benchmark::Counter(static_cast<double>(o.matrix_bytes),
                                                 benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const int kRegistered = [] {
  if (!cpu_supports(CpuTarget::Avx512Vnni)) return 0;
  struct Case {
    Encoding encoding;
    const char* level;
    Floor floor;
  };
  const Case cases[] = {{Encoding::Q8_0, "loads", q8_0_floor<FloorLevel::kLoads>},
                        {Encoding::Q8_0, "products", q8_0_floor<FloorLevel::kProducts>},
                        {Encoding::Q8_0, "sums", q8_0_floor<FloorLevel::kSums>},
                        {Encoding::Q4_K, "loads", q4_k_floor<FloorLevel::kLoads>},
                        {Encoding::Q4_K, "products", q4_k_floor<FloorLevel::kProducts>}};
  for (const Case& c : cases) {
    const std::string name = std::string("matvec-floor/") + encoding_info(c.encoding).name + "/" + c.level + "/l2";
    benchmark::RegisterBenchmark(name.c_str(), floor_bench, c.encoding, c.floor);
  }
  return 0;
}();

}  // namespace
}  // namespace synapse::cpu
