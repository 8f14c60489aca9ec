// The steps of the Q4_K, Q5_K and Q6_K encoders around the per-sub-block
// fits (k_quant_fit.h): quantizing the fitted sub-block scales into the
// block's codes, and packing the final levels into its bytes. The reference
// codecs and the CPU kernels' SIMD encoders (kernels/cpu/kquant_encode.h)
// share these, so only the fits and the requantization exist twice.
#pragma once

#include <cstdint>

#include "encoding/blocks.h"

namespace synapse::kquant {

// Q4_K and Q5_K: 8 sub-blocks of 32 elements with a scale and an offset each.
inline constexpr int kOffsetSubElems = 32;
inline constexpr int kOffsetSubBlocks = blocks::kSuperElems / kOffsetSubElems;
// Q6_K: 16 sub-blocks of 16 elements with a signed scale each.
inline constexpr int kSymmetricSubElems = 16;
inline constexpr int kSymmetricSubBlocks = blocks::kSuperElems / kSymmetricSubElems;
inline constexpr int kSymmetricNmax = 32;  // Q6_K levels are L - 32 with L in [0, 63]

// ggml's search settings for fit_offset_levels, per format.
struct OffsetSearch {
  int nmax;
  float rmin;
  float rdelta;
  int nstep;
};
inline constexpr OffsetSearch kQ4KSearch{15, -1.0f, 0.1f, 20};
inline constexpr OffsetSearch kQ5KSearch{31, -0.5f, 0.1f, 15};
// ggml's settings (make_qkx3_quants) in its importance-weighted encoders of
// the offset formats: 4-bit levels (Q4_1, Q4_K) and 5-bit ones (Q5_1, Q5_K).
inline constexpr OffsetSearch kWeighted4BitSearch{15, -0.9f, 0.05f, 36};
inline constexpr OffsetSearch kWeighted5BitSearch{31, -0.9f, 0.05f, 36};

// A Q4_K / Q5_K block's 6-bit sub-block codes, and d and dmin as stored.
struct OffsetCodes {
  uint8_t scales[kOffsetSubBlocks];
  uint8_t mins[kOffsetSubBlocks];
  float d;
  float dmin;
};

// Quantizes the fitted scales and offsets (both >= 0) of a block's 8
// sub-blocks to 6 bits against their maxima: writes d, dmin and the packed
// codes, and returns the codes for the requantization.
OffsetCodes encode_offset_scales(const float* scales, const float* offsets, blocks::Half& d, blocks::Half& dmin,
                                 uint8_t* packed_scales);

// Levels of a Q4_K / Q5_K block against its codes as the decoder reads them
// (d, dmin as stored, the packed scales): for each sub-block whose scale is
// not 0, level = round((x + dmin * min) / (d * scale)) in [0, nmax].
void requantize_offset_levels(const float* x, const uint8_t* packed_scales, float d, float dmin, int nmax,
                              uint8_t* levels);

// levels[256] in [0, 15] (Q4_K) or [0, 31] (Q5_K) into the block's bits.
void pack_q4_k_levels(const uint8_t* levels, blocks::Q4_K& b);
void pack_q5_k_levels(const uint8_t* levels, blocks::Q5_K& b);

// Quantizes the fitted scales of a Q6_K block's 16 sub-blocks to int8
// against the one of largest magnitude, writing d and the scale codes.
// Returns false, having zeroed the whole block, when every scale is
// (nearly) zero.
bool encode_symmetric_scales(const float* scales, blocks::Q6_K& b);

// levels[256] in [0, 63] into the block's ql and qh.
void pack_q6_k_levels(const int8_t* levels, blocks::Q6_K& b);

}  // namespace synapse::kquant
