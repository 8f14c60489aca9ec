// Byte layouts of the quantized blocks we implement, field for field as in
// ggml-common.h. Every member is a byte array, so a block has alignment 1 and
// can be read in place at any address; fp16 fields are little-endian.
#pragma once

#include <bit>
#include <cstdint>

#include "encoding/fp16.h"

namespace synapse::blocks {

static_assert(std::endian::native == std::endian::little,
              "block layouts are read in place and assume a little-endian host");

inline constexpr int kLegacyElems = 32;   // QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0
inline constexpr int kSuperElems = 256;   // QK_K
inline constexpr int kScaleBytesK = 12;   // K_SCALE_SIZE: 8 six-bit scales + 8 six-bit mins

struct Half {
  uint8_t bytes[2];
  float get() const { return fp16_to_fp32(static_cast<uint16_t>(bytes[0] | (bytes[1] << 8))); }
  void set(float f) {
    const uint16_t h = fp32_to_fp16(f);
    bytes[0] = static_cast<uint8_t>(h);
    bytes[1] = static_cast<uint8_t>(h >> 8);
  }
};

// x = (q - 8) * d
struct Q4_0 {
  Half d;
  uint8_t qs[kLegacyElems / 2];  // element j in the low nibble of qs[j], j+16 in the high
};

// x = q * d + m
struct Q4_1 {
  Half d;
  Half m;
  uint8_t qs[kLegacyElems / 2];
};

// x = (q - 16) * d; the fifth bit of element j is bit j of qh (little-endian u32)
struct Q5_0 {
  Half d;
  uint8_t qh[4];
  uint8_t qs[kLegacyElems / 2];
};

// x = q * d + m
struct Q5_1 {
  Half d;
  Half m;
  uint8_t qh[4];
  uint8_t qs[kLegacyElems / 2];
};

// x = q * d
struct Q8_0 {
  Half d;
  int8_t qs[kLegacyElems];
};

// 8 sub-blocks of 32: x = d * scale[j] * q - dmin * min[j], q in [0, 15]
struct Q4_K {
  Half d;
  Half dmin;
  uint8_t scales[kScaleBytesK];
  uint8_t qs[kSuperElems / 2];
};

// As Q4_K with a fifth bit per element in qh: q in [0, 31]
struct Q5_K {
  Half d;
  Half dmin;
  uint8_t scales[kScaleBytesK];
  uint8_t qh[kSuperElems / 8];
  uint8_t qs[kSuperElems / 2];
};

// 16 sub-blocks of 16: x = d * scale[j] * (q - 32), q in [0, 63]
struct Q6_K {
  uint8_t ql[kSuperElems / 2];  // low 4 bits
  uint8_t qh[kSuperElems / 4];  // high 2 bits
  int8_t scales[kSuperElems / 16];
  Half d;
};

static_assert(sizeof(Q4_0) == 18 && sizeof(Q4_1) == 20 && sizeof(Q5_0) == 22 && sizeof(Q5_1) == 24 &&
              sizeof(Q8_0) == 34);
static_assert(sizeof(Q4_K) == 144 && sizeof(Q5_K) == 176 && sizeof(Q6_K) == 210);
static_assert(alignof(Q4_K) == 1 && alignof(Q6_K) == 1 && alignof(Q8_0) == 1);

// Q4_K / Q5_K pack eight 6-bit (scale, min) pairs into 12 bytes: bytes 0-3
// hold scales 0-3, bytes 4-7 mins 0-3 (low 6 bits each); bytes 8-11 hold the
// low nibbles of scale j+4 (low) and min j+4 (high), whose top two bits live
// in the spare top bits of bytes j and j+4. Same as ggml's get_scale_min_k4.
inline void unpack_scale_min(const uint8_t* packed, int j, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = packed[j] & 63;
    min = packed[j + 4] & 63;
  } else {
    scale = static_cast<uint8_t>((packed[j + 4] & 0x0f) | ((packed[j - 4] >> 6) << 4));
    min = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
  }
}

// Codes above 63 are packed as ggml packs them (their extra bits spill into
// their neighbours): only the importance-weighted encoders can produce them,
// from a (degenerate) negative sub-block scale.
inline void pack_scale_mins(const uint8_t (&scales)[8], const uint8_t (&mins)[8], uint8_t* packed) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scales[j] | ((scales[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(mins[j] | ((mins[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((mins[j + 4] & 0x0f) << 4));
  }
}

}  // namespace synapse::blocks
