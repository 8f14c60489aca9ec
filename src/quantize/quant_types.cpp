#include "quantize/quant_types.h"

#include <cctype>

namespace synapse::quant {

namespace {

// llama_ftype values (llama.h).
enum FileType : uint32_t {
  kAllF32 = 0,
  kMostlyF16 = 1,
  kMostlyQ4_0 = 2,
  kMostlyQ4_1 = 3,
  kMostlyQ8_0 = 7,
  kMostlyQ5_0 = 8,
  kMostlyQ5_1 = 9,
  kMostlyQ4_K_S = 14,
  kMostlyQ4_K_M = 15,
  kMostlyQ5_K_S = 16,
  kMostlyQ5_K_M = 17,
  kMostlyQ6_K = 18,
  kMostlyBF16 = 32,
};

// Plain q4_k/q5_k are llama.cpp's "_S" file types, whose base encoding they
// are (llama-quantize's own "Q4_K" alias means Q4_K_M; ours does not).
constexpr QuantType kTypes[] = {
    {"f32", nullptr, kAllF32, Encoding::F32},
    {"f16", nullptr, kMostlyF16, Encoding::F16},
    {"bf16", nullptr, kMostlyBF16, Encoding::BF16},
    {"q8_0", nullptr, kMostlyQ8_0, Encoding::Q8_0},
    {"q4_0", nullptr, kMostlyQ4_0, Encoding::Q4_0},
    {"q4_1", nullptr, kMostlyQ4_1, Encoding::Q4_1},
    {"q5_0", nullptr, kMostlyQ5_0, Encoding::Q5_0},
    {"q5_1", nullptr, kMostlyQ5_1, Encoding::Q5_1},
    {"q4_k", "q4_k_s", kMostlyQ4_K_S, Encoding::Q4_K},
    {"q5_k", "q5_k_s", kMostlyQ5_K_S, Encoding::Q5_K},
    {"q6_k", nullptr, kMostlyQ6_K, Encoding::Q6_K},
    {"q4_k_m", nullptr, kMostlyQ4_K_M, Encoding::Q4_K},
    {"q5_k_m", nullptr, kMostlyQ5_K_M, Encoding::Q5_K},
};

bool same_name(const std::string& a, const char* b) {
  if (b == nullptr || a.size() != std::char_traits<char>::length(b)) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

}  // namespace

const QuantType* find_quant_type(const std::string& name) {
  for (const QuantType& t : kTypes)
    if (same_name(name, t.name) || same_name(name, t.alias)) return &t;
  return nullptr;
}

std::vector<std::string> quant_type_names() {
  std::vector<std::string> names;
  for (const QuantType& t : kTypes) names.emplace_back(t.name);
  return names;
}

bool is_block_encoding(Encoding e) { return encoding_info(e).block_elems > 1; }

}  // namespace synapse::quant
