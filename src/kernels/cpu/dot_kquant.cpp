// Dot tiles for k-quant weights (Q4_K, Q5_K, Q6_K) against Q8K activations:
// the portable scalar tiles and the (encoding, target) table.
//
// Every k-quant super-block reads as 16 sub-blocks of 16 levels q >= 0 with
// an integer scale and an integer "min" each:
//   x[i] = d * scale[k] * q[i] - dmin * min[k]     (k = i / 16)
// Q4_K / Q5_K repeat each 32-element sub-block's scale and min twice; Q6_K's
// q - 32 becomes min[k] = 32 * scale[k] with dmin = d. Against activations
// d_x * qs[i], a super-block then contributes
//   d_x * (d * sum_k scale[k] * dot_k - dmin * sum_k min[k] * bsums[k])
// with both sums exact in int32, so only the two float steps per
// super-block carry rounding, in the same order for every pair.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "encoding/blocks.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/dot_kquant_tiles.h"

namespace synapse::cpu {
namespace {

namespace layout = kquant;

// The SIMD units read blocks by byte offset; keep them in step with the
// structs the codecs use.
static_assert(sizeof(ActQ8KBlock) == layout::kActBlockBytes && offsetof(ActQ8KBlock, bsums) == layout::kActBsumsOffset &&
              offsetof(ActQ8KBlock, qs) == layout::kActQsOffset);
static_assert(sizeof(blocks::Q4_K) == layout::kQ4KBytes && offsetof(blocks::Q4_K, scales) == layout::kQ4KScalesOffset &&
              offsetof(blocks::Q4_K, qs) == layout::kQ4KQsOffset);
static_assert(sizeof(blocks::Q5_K) == layout::kQ5KBytes && offsetof(blocks::Q5_K, scales) == layout::kQ5KScalesOffset &&
              offsetof(blocks::Q5_K, qh) == layout::kQ5KQhOffset && offsetof(blocks::Q5_K, qs) == layout::kQ5KQsOffset);
static_assert(sizeof(blocks::Q6_K) == layout::kQ6KBytes && offsetof(blocks::Q6_K, ql) == layout::kQ6KQlOffset &&
              offsetof(blocks::Q6_K, qh) == layout::kQ6KQhOffset &&
              offsetof(blocks::Q6_K, scales) == layout::kQ6KScalesOffset && offsetof(blocks::Q6_K, d) == layout::kQ6KDOffset);
static_assert(blocks::kSuperElems == layout::kSuperElems);

constexpr int kSub = 16;
constexpr int kNumSub = blocks::kSuperElems / kSub;

// One weight super-block in the common form above.
struct SuperBlock {
  float d;
  float dmin;
  uint8_t q[blocks::kSuperElems];
  int32_t scale[kNumSub];
  int32_t min[kNumSub];
};

// Q4_K / Q5_K: 32 bytes of qs hold sub-block 2c in the low nibbles and 2c+1
// in the high ones; Q5_K's fifth bit of sub-block s is bit s of qh[l].
void unpack_q4_k_or_q5_k(const uint8_t* packed_scales, const uint8_t* qs, const uint8_t* qh, SuperBlock& s) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    blocks::unpack_scale_min(packed_scales, j, sc, m);
    s.scale[2 * j] = s.scale[2 * j + 1] = sc;
    s.min[2 * j] = s.min[2 * j + 1] = m;
  }
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t byte = qs[32 * c + l];
      const int high_lo = qh ? ((qh[l] >> (2 * c)) & 1) << 4 : 0;
      const int high_hi = qh ? ((qh[l] >> (2 * c + 1)) & 1) << 4 : 0;
      s.q[64 * c + l] = static_cast<uint8_t>((byte & 0x0f) | high_lo);
      s.q[64 * c + 32 + l] = static_cast<uint8_t>((byte >> 4) | high_hi);
    }
  }
}

void unpack_q4_k(const uint8_t* p, SuperBlock& s) {
  const auto& b = *reinterpret_cast<const blocks::Q4_K*>(p);
  s.d = b.d.get();
  s.dmin = b.dmin.get();
  unpack_q4_k_or_q5_k(b.scales, b.qs, nullptr, s);
}

void unpack_q5_k(const uint8_t* p, SuperBlock& s) {
  const auto& b = *reinterpret_cast<const blocks::Q5_K*>(p);
  s.d = b.d.get();
  s.dmin = b.dmin.get();
  unpack_q4_k_or_q5_k(b.scales, b.qs, b.qh, s);
}

// Q6_K: per 128-element half, elements l, l+32, l+64, l+96 take their high
// two bits from qh[l]; l and l+64 share ql[l], l+32 and l+96 share ql[l+32].
void unpack_q6_k(const uint8_t* p, SuperBlock& s) {
  const auto& b = *reinterpret_cast<const blocks::Q6_K*>(p);
  s.d = b.d.get();
  s.dmin = s.d;
  for (int k = 0; k < kNumSub; ++k) {
    s.scale[k] = b.scales[k];
    s.min[k] = 32 * b.scales[k];
  }
  for (int half = 0; half < 2; ++half) {
    const uint8_t* ql = b.ql + 64 * half;
    const uint8_t* qh = b.qh + 32 * half;
    uint8_t* q = s.q + 128 * half;
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<uint8_t>((ql[l] & 0x0f) | ((qh[l] & 3) << 4));
      q[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4));
      q[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
      q[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | ((qh[l] >> 6) << 4));
    }
  }
}

// acc plus one super-block's contribution to a pair's dot product.
float accumulate(const SuperBlock& w, const ActQ8KBlock& x, float acc) {
  int32_t scaled_dot = 0;
  int32_t min_sum = 0;
  for (int k = 0; k < kNumSub; ++k) {
    int32_t dot = 0;
    for (int i = kSub * k; i < kSub * (k + 1); ++i) dot += w.q[i] * x.qs[i];
    scaled_dot += w.scale[k] * dot;
    min_sum += w.min[k] * x.bsums[k];
  }
  // Explicit fma: no contraction choice left to the compiler.
  acc = std::fma(x.d * w.d, static_cast<float>(scaled_dot), acc);
  return std::fma(-(x.d * w.dmin), static_cast<float>(min_sum), acc);
}

using Unpack = void (*)(const uint8_t* block, SuperBlock& s);

template <Unpack kUnpack, uint64_t kBlockBytes>
void scalar_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
                 int64_t n, float* y, int64_t y_stride) {
  const int64_t blocks_per_row = n / blocks::kSuperElems;
  SuperBlock s;
  ActQ8KBlock a;
  for (int r = 0; r < rows; ++r) {
    for (int t0 = 0; t0 < tokens; t0 += kMaxTileTokens) {
      const int group = std::min(tokens - t0, kMaxTileTokens);
      float acc[kMaxTileTokens] = {};
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        kUnpack(w + r * w_stride + b * kBlockBytes, s);
        for (int t = 0; t < group; ++t) {
          // memcpy: activation rows need not be aligned
          std::memcpy(&a, x + (t0 + t) * x_stride + b * sizeof(ActQ8KBlock), sizeof(a));
          acc[t] = accumulate(s, a, acc[t]);
        }
      }
      for (int t = 0; t < group; ++t) y[(t0 + t) * y_stride + r] = acc[t];
    }
  }
}

constexpr kquant::Tiles kScalarTiles{scalar_tile<unpack_q4_k, sizeof(blocks::Q4_K)>,
                                     scalar_tile<unpack_q5_k, sizeof(blocks::Q5_K)>,
                                     scalar_tile<unpack_q6_k, sizeof(blocks::Q6_K)>};

}  // namespace

// Which path matmul takes for a few tokens (bench/kernels prefill on one
// Zen 4 core, GMAC/s with the matrix in DRAM, matvec / tiles / panel):
// Q4_K 40/33/20 at 2 tokens, 48/35/43 at 4, 50/34/49 at 6, 52/41/64 at 8;
// Q5_K (no panel) 34/26 at 2, 34/29 at 6, 36/35 at 8; Q6_K, whose levels
// take more work to repack, 28/29/14 at 2, 29/28/31 at 6, 31/36/47 at 8
// (in L3 its panel wins from 6 too: 50 against 46 for the tiles). Whole
// 5-token steps of llama-3.2-1b Q4_K_M (synapse bench, interleaved, Zen 5)
// ran 100-105 t/s with the Q4_K panel and 135-141 with the tiles at 2
// threads (57 and 75 at 1): there the panel's repacking outweighs it.
constexpr int kQ4KMatvecMaxTokens = 4;
constexpr int kQ4KPanelMinTokens = 6;
constexpr int kQ5KMatvecMaxTokens = 6;
constexpr int kQ6KPanelMinTokens = 6;

DotKernel find_kquant_dot_kernel(Encoding encoding, CpuTarget target) {
  const kquant::Tiles* set = nullptr;
  switch (target) {
    case CpuTarget::Scalar: set = &kScalarTiles; break;
    case CpuTarget::Avx2: set = &kquant::kAvx2Tiles; break;
    case CpuTarget::Avx512: return {};  // the AVX2 tiles serve; VNNI is what AVX-512 would add
    case CpuTarget::Avx512Vnni: set = &kquant::kVnniTiles; break;
  }
  if (!set) return {};
  const bool vnni = target == CpuTarget::Avx512Vnni;
  const kquant::Panels* panels = vnni ? &kquant::kVnniPanels : nullptr;
  const kquant::Matvecs* matvecs = vnni ? &kquant::kVnniMatvecs : nullptr;
  const auto kernel = [&](DotTile tile, DotTile panel, DotRows matvec) {
    DotKernel k{.activation = ActivationFormat::Q8K, .tile = tile, .panel = panel};
    if (matvecs) {
      k.matvec = matvec;
      k.matvec_rows = matvecs->rows;
    }
    return k;
  };
  switch (encoding) {
    case Encoding::Q4_K: {
      DotKernel q4_k = kernel(set->q4_k, panels ? panels->q4_k : nullptr, matvecs ? matvecs->q4_k : nullptr);
      q4_k.matvec_max_tokens = kQ4KMatvecMaxTokens;
      q4_k.panel_min_tokens = kQ4KPanelMinTokens;
      return q4_k;
    }
    case Encoding::Q5_K: {
      DotKernel q5_k = kernel(set->q5_k, nullptr, matvecs ? matvecs->q5_k : nullptr);
      q5_k.matvec_max_tokens = kQ5KMatvecMaxTokens;
      return q5_k;
    }
    case Encoding::Q6_K: {
      DotKernel q6_k = kernel(set->q6_k, panels ? panels->q6_k : nullptr, matvecs ? matvecs->q6_k : nullptr);
      q6_k.panel_min_tokens = kQ6KPanelMinTokens;
      return q6_k;
    }
    default: return {};
  }
}

}  // namespace synapse::cpu
