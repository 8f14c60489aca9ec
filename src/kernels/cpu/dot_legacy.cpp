// Dot kernels of the legacy block encodings: Q8_0, Q4_0 and Q5_0 weights
// against Q8 activations. The portable tile lives here; the SIMD tiles live in the
// per-target translation units declared in dot_legacy_tiles.h.
#include <cstring>

#include "encoding/blocks.h"
#include "kernels/cpu/dot_families.h"
#include "kernels/cpu/dot_legacy_tiles.h"

namespace synapse::cpu {
namespace {

// One weight block as signed integers, read once and used for every token.
struct IntBlock {
  float d;
  int8_t q[blocks::kLegacyElems];
};

IntBlock read_q8_0(const uint8_t* bytes) {
  const auto& block = *reinterpret_cast<const blocks::Q8_0*>(bytes);
  IntBlock out;
  out.d = block.d.get();
  std::memcpy(out.q, block.qs, sizeof(out.q));
  return out;
}

IntBlock read_q4_0(const uint8_t* bytes) {
  const auto& block = *reinterpret_cast<const blocks::Q4_0*>(bytes);
  constexpr int kHalf = blocks::kLegacyElems / 2;
  IntBlock out;
  out.d = block.d.get();
  for (int j = 0; j < kHalf; ++j) {
    out.q[j] = static_cast<int8_t>((block.qs[j] & 0x0f) - 8);
    out.q[j + kHalf] = static_cast<int8_t>((block.qs[j] >> 4) - 8);
  }
  return out;
}

IntBlock read_q5_0(const uint8_t* bytes) {
  const auto& block = *reinterpret_cast<const blocks::Q5_0*>(bytes);
  constexpr int kHalf = blocks::kLegacyElems / 2;
  uint32_t high;
  std::memcpy(&high, block.qh, sizeof(high));
  IntBlock out;
  out.d = block.d.get();
  for (int j = 0; j < kHalf; ++j) {
    out.q[j] = static_cast<int8_t>(((block.qs[j] & 0x0f) | ((high >> j) & 1) << 4) - 16);
    out.q[j + kHalf] = static_cast<int8_t>(((block.qs[j] >> 4) | ((high >> (j + kHalf)) & 1) << 4) - 16);
  }
  return out;
}

// Every (row, token) pair owns one accumulator updated with the same
// statements in block order, so the tile shape never changes its float.
template <class Block, IntBlock (*read)(const uint8_t*)>
void scalar_tile(const uint8_t* w, uint64_t w_stride, int rows, const uint8_t* x, uint64_t x_stride, int tokens,
                 int64_t n, float* y, int64_t y_stride) {
  if (rows < 1 || rows > kMaxTileRows || tokens < 1 || tokens > kMaxTileTokens) return;  // as the SIMD tiles
  float acc[kMaxTileRows][kMaxTileTokens] = {};
  ActQ8Block act[kMaxTileTokens];
  for (int64_t b = 0; b < n / blocks::kLegacyElems; ++b) {
    for (int t = 0; t < tokens; ++t)
      std::memcpy(&act[t], x + t * x_stride + b * sizeof(ActQ8Block), sizeof(ActQ8Block));
    for (int r = 0; r < rows; ++r) {
      const IntBlock weights = read(w + r * w_stride + b * sizeof(Block));
      for (int t = 0; t < tokens; ++t) {
        int32_t dot = 0;
        for (int i = 0; i < blocks::kLegacyElems; ++i) dot += weights.q[i] * act[t].qs[i];
        acc[r][t] += (weights.d * act[t].d) * static_cast<float>(dot);
      }
    }
  }
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) y[t * y_stride + r] = acc[r][t];
}

DotTile tile_for(Encoding encoding, CpuTarget target) {
  const legacy::Tiles* set = nullptr;
  switch (target) {
    case CpuTarget::Scalar: {
      static constexpr legacy::Tiles kScalar{scalar_tile<blocks::Q8_0, read_q8_0>, scalar_tile<blocks::Q4_0, read_q4_0>,
                                             scalar_tile<blocks::Q5_0, read_q5_0>};
      set = &kScalar;
      break;
    }
    case CpuTarget::Avx2: set = &legacy::kAvx2Tiles; break;
    case CpuTarget::Avx512: return nullptr;  // the AVX2 tile serves; VNNI is what int8 dots gain from
    case CpuTarget::Avx512Vnni: set = &legacy::kVnniTiles; break;
  }
  if (!set) return nullptr;
  switch (encoding) {
    case Encoding::Q8_0: return set->q8_0;
    case Encoding::Q4_0: return set->q4_0;
    case Encoding::Q5_0: return set->q5_0;
    default: return nullptr;
  }
}

}  // namespace

// The token counts from which the VNNI panels beat the tiles. Q4_0, whose
// rows repack cheaply: from 2 (bench/kernels prefill on one Zen 4 core,
// GMAC/s of panel against tiles with the matrix in DRAM / in L3, 27/20 and
// 34/24). Q8_0: from 9. Below that, repacking its rows costs the panel more
// than it saves: whole steps of 5 and 8 tokens (synapse bench, interleaved,
// Zen 5) ran 240/340 and 360/440 t/s (panel/tiles) on the qwen2.5-0.5b
// shape at 2 threads, 104/152 and 143/185 on llama-3.2-1b, and the same
// or better at 1 thread; speculative verification and batched decoding
// take such steps.
constexpr int kQ8_0PanelMinTokens = 9;
constexpr int kQ4_0PanelMinTokens = 2;

DotKernel find_legacy_dot_kernel(Encoding encoding, CpuTarget target) {
  const DotTile tile = tile_for(encoding, target);
  if (!tile) return {};
  DotKernel kernel{.activation = ActivationFormat::Q8, .tile = tile};
  // Q5_0 (the fallback of k-quant files for rows that are not whole
  // super-blocks) has tiles only.
  // Q4_0's panel takes steps of 8 tokens (it starts at 2); Q8_0 and Q5_0 take
  // them through the wide tile.
  if (target == CpuTarget::Avx512Vnni && encoding != Encoding::Q4_0)
    kernel.wide_tile = encoding == Encoding::Q8_0 ? legacy::kVnniWideTiles.q8_0 : legacy::kVnniWideTiles.q5_0;
  if (target == CpuTarget::Avx512Vnni && encoding != Encoding::Q5_0) {
    const bool q8_0 = encoding == Encoding::Q8_0;
    kernel.panel = q8_0 ? legacy::kVnniPanels.q8_0 : legacy::kVnniPanels.q4_0;
    kernel.panel_min_tokens = q8_0 ? kQ8_0PanelMinTokens : kQ4_0PanelMinTokens;
    kernel.matvec = q8_0 ? legacy::kVnniMatvecs.q8_0 : legacy::kVnniMatvecs.q4_0;
    kernel.matvec_rows = legacy::kVnniMatvecs.rows;
  }
  return kernel;
}

}  // namespace synapse::cpu
