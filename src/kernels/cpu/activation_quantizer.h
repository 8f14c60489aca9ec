// Per-target implementations of activation quantization. Every one gives
// the same bytes as the portable one (the same IEEE operations, rounding
// to nearest even, NaN ignored by the max), so which one runs never
// changes a result. Declarations only: see dot_kernel.h on why.
#pragma once

#include <cstdint>

namespace synapse::cpu::quantizer {

// Fills the int8 values of `blocks` blocks of `block` floats (32 or 256):
// q = x * 127 / max|block| rounded, clamped to [-127, 127]; writes each
// block's max|x| to amax[b]. Values of block b go to qs + b * qs_stride.
using QuantizeBlocks = void (*)(const float* x, int64_t blocks, int block, int8_t* qs, uint64_t qs_stride,
                                float* amax);

void quantize_blocks_scalar(const float* x, int64_t blocks, int block, int8_t* qs, uint64_t qs_stride,
                            float* amax);
void quantize_blocks_avx2(const float* x, int64_t blocks, int block, int8_t* qs, uint64_t qs_stride, float* amax);

}  // namespace synapse::cpu::quantizer
