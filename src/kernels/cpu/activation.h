// Activations as the CPU dot kernels read them. Integer kernels multiply
// int8 weights by int8 activations, so each activation row is quantized
// once per step, in the block layout its weight encoding pairs with.
// Quantization is one scalar routine for every target, so a row's int8
// values never depend on the kernel that reads them.
#pragma once

#include <cstdint>

namespace synapse::cpu {

enum class ActivationFormat : unsigned char {
  F32,  // the float row as is (F32, F16, BF16 weights)
  Q8,   // blocks of 32 (Q8_0, Q4_0 weights)
  Q8K,  // blocks of 256 with sums per 16 (Q4_K, Q5_K, Q6_K weights)
};

// 32 activations: x[i] ~= d * qs[i]; sum = sum of qs (for Q4_0's -8 offset).
struct ActQ8Block {
  float d;
  int32_t sum;
  int8_t qs[32];
};

// 256 activations: x[i] ~= d * qs[i]; bsums[j] = sum of qs[16j .. 16j+15].
struct ActQ8KBlock {
  float d;
  int16_t bsums[16];
  int8_t qs[256];
};

static_assert(sizeof(ActQ8Block) == 40 && sizeof(ActQ8KBlock) == 292);

// Elements per block of the format (1 for F32).
int64_t activation_block_elems(ActivationFormat format);
// Bytes of one quantized row of n elements (n a multiple of the block).
uint64_t activation_row_bytes(ActivationFormat format, int64_t n);
// Quantizes n floats (a multiple of the block) into out: q = x * 127 /
// max|x| rounded to nearest (ties to even), d about max|x| / 127 (Q8: rounded
// to fp16, as ggml's q8_0); an all-zero block has d = 0.
void quantize_activation_row(ActivationFormat format, const float* x, int64_t n, uint8_t* out);

}  // namespace synapse::cpu
