#include "kernels/cpu/activation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "encoding/fp16.h"
#include "kernels/cpu/activation_quantizer.h"
#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {
namespace {

// Blocks quantized per call of the block quantizer (bounds the stack array
// of maxima).
constexpr int64_t kBlocksPerPass = 64;

quantizer::QuantizeBlocks block_quantizer() {
  static const quantizer::QuantizeBlocks chosen =
      cpu_supports(CpuTarget::Avx2) ? quantizer::quantize_blocks_avx2 : quantizer::quantize_blocks_scalar;
  return chosen;
}

// Quantizes the n / block blocks of x into blocks of type Block, whose
// values are at offset qs_offset; finish(block, amax) sets the rest.
template <class Block, class Finish>
void quantize_row_as(const float* x, int64_t n, int block, size_t qs_offset, uint8_t* out, Finish finish) {
  float amax[kBlocksPerPass];
  const quantizer::QuantizeBlocks quantize = block_quantizer();
  for (int64_t b0 = 0; b0 < n / block; b0 += kBlocksPerPass) {
    const int64_t count = std::min(kBlocksPerPass, n / block - b0);
    uint8_t* first = out + b0 * sizeof(Block);
    quantize(x + b0 * block, count, block, reinterpret_cast<int8_t*>(first + qs_offset), sizeof(Block), amax);
    for (int64_t b = 0; b < count; ++b) {
      Block value;
      std::memcpy(&value, first + b * sizeof(Block), sizeof(Block));
      finish(value, amax[b]);
      std::memcpy(first + b * sizeof(Block), &value, sizeof(Block));
    }
  }
}

}  // namespace

namespace quantizer {

void quantize_blocks_scalar(const float* x, int64_t blocks, int block, int8_t* qs, uint64_t qs_stride,
                            float* amax) {
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * block;
    float max = 0.0f;
    for (int i = 0; i < block; ++i) max = std::fmax(max, std::fabs(xb[i]));
    amax[b] = max;
    const float inverse = max > 0.0f ? 127.0f / max : 0.0f;
    for (int i = 0; i < block; ++i)
      qs[b * qs_stride + i] = static_cast<int8_t>(std::fmin(127.0f, std::fmax(-127.0f, std::nearbyint(xb[i] * inverse))));
  }
}

}  // namespace quantizer

int64_t activation_block_elems(ActivationFormat format) {
  switch (format) {
    case ActivationFormat::F32: return 1;
    case ActivationFormat::Q8: return 32;
    case ActivationFormat::Q8K: return 256;
  }
  return 1;
}

uint64_t activation_row_bytes(ActivationFormat format, int64_t n) {
  switch (format) {
    case ActivationFormat::F32: return static_cast<uint64_t>(n) * sizeof(float);
    case ActivationFormat::Q8: return static_cast<uint64_t>(n / 32) * sizeof(ActQ8Block);
    case ActivationFormat::Q8K: return static_cast<uint64_t>(n / 256) * sizeof(ActQ8KBlock);
  }
  return 0;
}

void quantize_activation_row(ActivationFormat format, const float* x, int64_t n, uint8_t* out) {
  switch (format) {
    case ActivationFormat::F32:
      std::memcpy(out, x, static_cast<size_t>(n) * sizeof(float));
      return;
    case ActivationFormat::Q8:
      // As ggml's q8_0 activations (the scale rounded to fp16), so that our
      // Q8_0 and Q4_0 products follow llama.cpp's closely.
      quantize_row_as<ActQ8Block>(x, n, 32, offsetof(ActQ8Block, qs), out, [](ActQ8Block& block, float amax) {
        block.d = fp16_to_fp32(fp32_to_fp16(amax / 127.0f));
        block.sum = 0;
        for (int8_t q : block.qs) block.sum += q;
      });
      return;
    case ActivationFormat::Q8K:
      // As ggml's q8_K: a float scale, the reciprocal of the one applied.
      quantize_row_as<ActQ8KBlock>(x, n, 256, offsetof(ActQ8KBlock, qs), out, [](ActQ8KBlock& block, float amax) {
        block.d = amax > 0.0f ? 1.0f / (127.0f / amax) : 0.0f;
        for (int j = 0; j < 16; ++j) {
          int sum = 0;
          for (int i = 0; i < 16; ++i) sum += block.qs[16 * j + i];
          block.bsums[j] = static_cast<int16_t>(sum);
        }
      });
      return;
  }
}

}  // namespace synapse::cpu
