// Row-level entry points: size a row, and check n before handing whole
// blocks to a codec.
#include <string>

#include "encoding/encoding_table.h"
#include "synapse/error.h"

namespace synapse {

namespace {

std::string describe(const EncodingInfo& info) {
  return std::string(info.name) + " (id " + std::to_string(static_cast<uint32_t>(info.id)) + ")";
}

// The entry, checked to have a codec, and the number of blocks in n elements.
const EncodingEntry& codec_entry(Encoding e, int64_t n, int64_t& n_blocks) {
  const EncodingEntry& entry = encoding_entry(e);
  if (!entry.info.has_codec) {
    throw Error(ErrorKind::UnknownEncoding, "no codec for tensor encoding " + describe(entry.info));
  }
  if (n < 0 || n % entry.info.block_elems != 0) {
    throw Error(ErrorKind::InvalidValue, "row of " + std::to_string(n) + " elements is not a multiple of the " +
                                             describe(entry.info) + " block size " +
                                             std::to_string(entry.info.block_elems));
  }
  n_blocks = n / entry.info.block_elems;
  return entry;
}

}  // namespace

uint64_t row_bytes(Encoding e, uint64_t n) {
  const EncodingInfo& info = encoding_entry(e).info;
  if (n % info.block_elems != 0) {
    throw Error(ErrorKind::InvalidValue, "row of " + std::to_string(n) + " elements is not a multiple of the " +
                                             describe(info) + " block size " + std::to_string(info.block_elems));
  }
  const uint64_t n_blocks = n / info.block_elems;
  if (n_blocks > UINT64_MAX / info.block_bytes) {
    throw Error(ErrorKind::Overflow, "row of " + std::to_string(n) + " " + describe(info) +
                                         " elements overflows 64-bit byte size");
  }
  return n_blocks * info.block_bytes;
}

void dequantize_row(Encoding e, const void* src, float* dst, int64_t n) {
  int64_t n_blocks = 0;
  codec_entry(e, n, n_blocks).dequantize(src, dst, n_blocks);
}

void quantize_row(Encoding e, const float* src, void* dst, int64_t n) {
  int64_t n_blocks = 0;
  codec_entry(e, n, n_blocks).quantize(src, dst, n_blocks);
}

void quantize_row_weighted(Encoding e, const float* src, void* dst, int64_t n, const float* importance) {
  int64_t n_blocks = 0;
  const EncodingEntry& entry = codec_entry(e, n, n_blocks);
  if (importance == nullptr || entry.quantize_weighted == nullptr) {
    entry.quantize(src, dst, n_blocks);
  } else {
    entry.quantize_weighted(src, dst, n_blocks, importance);
  }
}

}  // namespace synapse
