// Tensor encodings (ggml types): the byte layout of each block, and the
// reference (scalar) conversion of a row to and from float32.
//
// Block layouts are bit-identical to ggml's, so files we write load in
// llama.cpp and our dequantized values equal ggml's on the same bytes.
//
// encoding/ is the bottom layer: format/, ir/, model/ and kernels/ build on
// it, and it includes no other folder of src/ (scripts/check_layering.cmake
// checks this).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace synapse {

// Numeric ids as stored in GGUF tensor infos (ggml's enum ggml_type).
enum class Encoding : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

// Static facts about one encoding. Known encodings have a layout (so file
// sizes can be checked); only some also have a codec we implement.
struct EncodingInfo {
  Encoding id;
  const char* name;        // ggml's name, lower case: "q4_K", "bf16", ...
  uint32_t block_elems;    // elements per block (1 for plain types)
  uint32_t block_bytes;    // bytes per block
  bool has_codec;          // dequantize_row / quantize_row implemented
};

// Layout facts for a raw ggml type id (as read from a file), or nullopt when
// the id is unknown.
std::optional<EncodingInfo> find_encoding(uint32_t id);

// Layout facts for an encoding; throws Error(UnknownEncoding) naming the id
// when e is not one of the enumerators (a cast from an unchecked id).
EncodingInfo encoding_info(Encoding e);

// Parse a name such as "q8_0" or "Q4_K" (case-insensitive); nullopt if unknown.
std::optional<Encoding> encoding_from_name(const std::string& name);

// Bytes needed for a row of n elements. Throws Error(InvalidValue) when n is
// not a multiple of the block size, Error(Overflow) on overflow.
uint64_t row_bytes(Encoding e, uint64_t n);

// Reference conversion of one row of n elements (n a multiple of the block
// size). Throw Error(UnknownEncoding) for encodings without a codec.
// cpu::encode_row (kernels/cpu/kquant_encode.h) writes the same bytes,
// Q4_K, Q5_K and Q6_K many times faster.
void dequantize_row(Encoding e, const void* src, float* dst, int64_t n);
void quantize_row(Encoding e, const float* src, void* dst, int64_t n);

// quantize_row with an importance matrix row, as ggml's quantizers with
// quant_weights (llama.cpp's imatrix): importance[i] >= 0 weighs column i
// of the row (n values). Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K fit
// their scales by importance-weighted least squares (other bytes than
// quantize_row's); the other encodings ignore the weights, as ggml does, and
// so does a null importance. Scalar reference code.
void quantize_row_weighted(Encoding e, const float* src, void* dst, int64_t n, const float* importance);

}  // namespace synapse
