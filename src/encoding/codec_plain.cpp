// Plain element types: F32 (a copy), F16 and BF16 (one 16-bit value each,
// little-endian).
#include <cstring>

#include "encoding/codecs.h"
#include "encoding/fp16.h"

namespace synapse::codecs {

namespace {

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace

void dequantize_f32(const void* src, float* dst, int64_t n_blocks) {
  std::memcpy(dst, src, static_cast<size_t>(n_blocks) * sizeof(float));
}

void quantize_f32(const float* src, void* dst, int64_t n_blocks) {
  std::memcpy(dst, src, static_cast<size_t>(n_blocks) * sizeof(float));
}

void dequantize_f16(const void* src, float* dst, int64_t n_blocks) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n_blocks; ++i) dst[i] = fp16_to_fp32(load_u16(in + 2 * i));
}

void quantize_f16(const float* src, void* dst, int64_t n_blocks) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i) store_u16(out + 2 * i, fp32_to_fp16(src[i]));
}

void dequantize_bf16(const void* src, float* dst, int64_t n_blocks) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n_blocks; ++i) dst[i] = bf16_to_fp32(load_u16(in + 2 * i));
}

void quantize_bf16(const float* src, void* dst, int64_t n_blocks) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i) store_u16(out + 2 * i, fp32_to_bf16(src[i]));
}

}  // namespace synapse::codecs
