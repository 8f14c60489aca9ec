#include "ir/ir_types.h"

namespace synapse::ir {

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I32: return "i32";
    case DType::Encoded: return "encoded";
  }
  return "?";
}

bool is_float(DType dtype) { return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16; }

// Only the plain encodings map to a dtype of their own.
DType dtype_of_encoding(Encoding encoding) {
  switch (encoding) {
    case Encoding::F32: return DType::F32;
    case Encoding::F16: return DType::F16;
    case Encoding::I32: return DType::I32;
    case Encoding::BF16: return DType::BF16;
    default: return DType::Encoded;
  }
}

Dim Dim::fixed(int64_t size) {
  Dim dim;
  dim.size = size;
  return dim;
}

Dim Dim::symbolic(std::string symbol, int64_t lower, std::string bound) {
  Dim dim;
  dim.symbol = std::move(symbol);
  dim.lower = lower;
  dim.bound = std::move(bound);
  return dim;
}

std::string to_string(const Dim& dim) {
  if (!dim.is_symbolic()) return std::to_string(dim.size);
  return dim.symbol + "[" + std::to_string(dim.lower) + ".." + dim.bound + "]";
}

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += to_string(shape[i]);
  }
  return out + "]";
}

std::string to_string(const ValueType& type) { return std::string(to_string(type.dtype)) + to_string(type.shape); }

}  // namespace synapse::ir
