// AVX2 activation quantization: the scalar routine's operations, eight
// floats at a time. Only intrinsics here (see dot_kernel.h).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/activation_quantizer.h"

namespace synapse::cpu::quantizer {
namespace {

float block_max_abs(const float* x, int block) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 acc = _mm256_setzero_ps();
  // max(a, acc) returns acc when a is NaN: NaN is ignored, as fmax does.
  for (int i = 0; i < block; i += 8) acc = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), acc);
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace

void quantize_blocks_avx2(const float* x, int64_t blocks, int block, int8_t* qs, uint64_t qs_stride, float* amax) {
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * block;
    const float max = block_max_abs(xb, block);
    amax[b] = max;
    const __m256 inverse = _mm256_set1_ps(max > 0.0f ? 127.0f / max : 0.0f);
    int8_t* out = qs + b * qs_stride;
    for (int i = 0; i < block; i += 32) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(xb + i + 8 * k), inverse);
        v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        // max(v, lo) returns lo for NaN, then min keeps it: as fmin(127, fmax(-127, v)).
        v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
        q[k] = _mm256_cvtps_epi32(v);
      }
      // Packing interleaves 128-bit lanes; the permute restores element order.
      const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permutevar8x32_epi32(packed, order));
    }
  }
}

}  // namespace synapse::cpu::quantizer
