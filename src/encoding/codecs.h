// The reference codecs behind dequantize_row / quantize_row. Each converts
// n_blocks whole blocks; the public entry points check n and dispatch here
// through the encoding table.
//
// Bit-exactness with ggml relies on float expressions being evaluated as
// written, without FMA contraction: CMakeLists.txt compiles encoding/ (and
// the SIMD K-quant encoders) with -ffp-contract=off.
#pragma once

#include <cstdint>

namespace synapse::codecs {

using DequantizeFn = void (*)(const void* src, float* dst, int64_t n_blocks);
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n_blocks);
// With one importance weight per element of the n_blocks (a whole row:
// some formats use statistics of the row).
using WeightedQuantizeFn = void (*)(const float* src, void* dst, int64_t n_blocks, const float* importance);

// codec_plain.cpp (one element per block)
void dequantize_f32(const void* src, float* dst, int64_t n_blocks);
void quantize_f32(const float* src, void* dst, int64_t n_blocks);
void dequantize_f16(const void* src, float* dst, int64_t n_blocks);
void quantize_f16(const float* src, void* dst, int64_t n_blocks);
void dequantize_bf16(const void* src, float* dst, int64_t n_blocks);
void quantize_bf16(const float* src, void* dst, int64_t n_blocks);

// codec_q_legacy.cpp (32 elements per block)
void dequantize_q4_0(const void* src, float* dst, int64_t n_blocks);
void quantize_q4_0(const float* src, void* dst, int64_t n_blocks);
void dequantize_q4_1(const void* src, float* dst, int64_t n_blocks);
void quantize_q4_1(const float* src, void* dst, int64_t n_blocks);
void dequantize_q5_0(const void* src, float* dst, int64_t n_blocks);
void quantize_q5_0(const float* src, void* dst, int64_t n_blocks);
void dequantize_q5_1(const void* src, float* dst, int64_t n_blocks);
void quantize_q5_1(const float* src, void* dst, int64_t n_blocks);
void quantize_q4_0_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void quantize_q4_1_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void quantize_q5_0_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void quantize_q5_1_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void dequantize_q8_0(const void* src, float* dst, int64_t n_blocks);
void quantize_q8_0(const float* src, void* dst, int64_t n_blocks);

// codec_q4k_q5k.cpp and codec_q6k.cpp (256 elements per block)
void dequantize_q4_k(const void* src, float* dst, int64_t n_blocks);
void quantize_q4_k(const float* src, void* dst, int64_t n_blocks);
void dequantize_q5_k(const void* src, float* dst, int64_t n_blocks);
void quantize_q5_k(const float* src, void* dst, int64_t n_blocks);
void dequantize_q6_k(const void* src, float* dst, int64_t n_blocks);
void quantize_q6_k(const float* src, void* dst, int64_t n_blocks);
void quantize_q4_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void quantize_q5_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);
void quantize_q6_k_weighted(const float* src, void* dst, int64_t n_blocks, const float* importance);

}  // namespace synapse::codecs
