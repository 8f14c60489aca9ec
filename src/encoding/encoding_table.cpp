// Every ggml type id we know: name and block layout (from ggml-common.h and
// the type traits in ggml.c), plus our codec where we have one. Ids missing
// here (4, 5, 31-33, 36-38) were removed from ggml and are unknown.
#include "encoding/encoding_table.h"

#include <array>
#include <cctype>

#include "synapse/error.h"

namespace synapse {

namespace {

using namespace codecs;

constexpr EncodingEntry plain(Encoding id, const char* name, uint32_t bytes) {
  return {{id, name, 1, bytes, false}, nullptr, nullptr};
}

constexpr EncodingEntry layout_only(Encoding id, const char* name, uint32_t elems, uint32_t bytes) {
  return {{id, name, elems, bytes, false}, nullptr, nullptr};
}

constexpr EncodingEntry with_codec(Encoding id, const char* name, uint32_t elems, uint32_t bytes,
                                   DequantizeFn dequantize, QuantizeFn quantize,
                                   WeightedQuantizeFn quantize_weighted = nullptr) {
  return {{id, name, elems, bytes, true}, dequantize, quantize, quantize_weighted};
}

constexpr auto kEntries = std::to_array<EncodingEntry>({
    with_codec(Encoding::F32, "f32", 1, 4, dequantize_f32, quantize_f32),
    with_codec(Encoding::F16, "f16", 1, 2, dequantize_f16, quantize_f16),
    with_codec(Encoding::Q4_0, "q4_0", 32, 18, dequantize_q4_0, quantize_q4_0, quantize_q4_0_weighted),
    with_codec(Encoding::Q4_1, "q4_1", 32, 20, dequantize_q4_1, quantize_q4_1, quantize_q4_1_weighted),
    with_codec(Encoding::Q5_0, "q5_0", 32, 22, dequantize_q5_0, quantize_q5_0, quantize_q5_0_weighted),
    with_codec(Encoding::Q5_1, "q5_1", 32, 24, dequantize_q5_1, quantize_q5_1, quantize_q5_1_weighted),
    with_codec(Encoding::Q8_0, "q8_0", 32, 34, dequantize_q8_0, quantize_q8_0),
    layout_only(Encoding::Q8_1, "q8_1", 32, 36),  // d, s (fp16) + 32 int8
    layout_only(Encoding::Q2_K, "q2_K", 256, 84),
    layout_only(Encoding::Q3_K, "q3_K", 256, 110),
    with_codec(Encoding::Q4_K, "q4_K", 256, 144, dequantize_q4_k, quantize_q4_k, quantize_q4_k_weighted),
    with_codec(Encoding::Q5_K, "q5_K", 256, 176, dequantize_q5_k, quantize_q5_k, quantize_q5_k_weighted),
    with_codec(Encoding::Q6_K, "q6_K", 256, 210, dequantize_q6_k, quantize_q6_k, quantize_q6_k_weighted),
    layout_only(Encoding::Q8_K, "q8_K", 256, 292),  // float d + 256 int8 + 16 int16 sums
    layout_only(Encoding::IQ2_XXS, "iq2_xxs", 256, 66),
    layout_only(Encoding::IQ2_XS, "iq2_xs", 256, 74),
    layout_only(Encoding::IQ3_XXS, "iq3_xxs", 256, 98),
    layout_only(Encoding::IQ1_S, "iq1_s", 256, 50),
    layout_only(Encoding::IQ4_NL, "iq4_nl", 32, 18),
    layout_only(Encoding::IQ3_S, "iq3_s", 256, 110),
    layout_only(Encoding::IQ2_S, "iq2_s", 256, 82),
    layout_only(Encoding::IQ4_XS, "iq4_xs", 256, 136),
    plain(Encoding::I8, "i8", 1),
    plain(Encoding::I16, "i16", 2),
    plain(Encoding::I32, "i32", 4),
    plain(Encoding::I64, "i64", 8),
    plain(Encoding::F64, "f64", 8),
    layout_only(Encoding::IQ1_M, "iq1_m", 256, 56),
    with_codec(Encoding::BF16, "bf16", 1, 2, dequantize_bf16, quantize_bf16),
    layout_only(Encoding::TQ1_0, "tq1_0", 256, 54),
    layout_only(Encoding::TQ2_0, "tq2_0", 256, 66),
    layout_only(Encoding::MXFP4, "mxfp4", 32, 17),
});

bool equals_ignoring_case(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i] != '\0'; ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return i == a.size() && b[i] == '\0';
}

}  // namespace

const EncodingEntry* find_encoding_entry(uint32_t id) {
  for (const EncodingEntry& e : kEntries) {
    if (static_cast<uint32_t>(e.info.id) == id) return &e;
  }
  return nullptr;
}

std::optional<EncodingInfo> find_encoding(uint32_t id) {
  const EncodingEntry* e = find_encoding_entry(id);
  if (!e) return std::nullopt;
  return e->info;
}

const EncodingEntry& encoding_entry(Encoding e) {
  const uint32_t id = static_cast<uint32_t>(e);
  const EncodingEntry* entry = find_encoding_entry(id);
  if (!entry) throw Error(ErrorKind::UnknownEncoding, "unknown tensor encoding id " + std::to_string(id));
  return *entry;
}

EncodingInfo encoding_info(Encoding e) { return encoding_entry(e).info; }

std::optional<Encoding> encoding_from_name(const std::string& name) {
  for (const EncodingEntry& e : kEntries) {
    if (equals_ignoring_case(name, e.info.name)) return e.info.id;
  }
  return std::nullopt;
}

}  // namespace synapse
