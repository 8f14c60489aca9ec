// Per-tensor encodings for a --type. The mix mirrors the branches of
// llama.cpp's llama_tensor_get_type_impl that apply to the file types synth
// writes; the IQ and Q2/Q3 branches and the 70B/Falcon special cases do not.
#include "synth/type_policy.h"

#include "synth/synth_names.h"

namespace synapse::synth {

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
  kMostlyQ6_K = 18,
  kMostlyBF16 = 32,
};

// Plain q4_k/q5_k are written as llama.cpp's "_S" file types, whose base
// encoding they are.
constexpr SynthType kTypes[] = {
    {"f32", kAllF32, Encoding::F32},         {"f16", kMostlyF16, Encoding::F16},
    {"bf16", kMostlyBF16, Encoding::BF16},   {"q8_0", kMostlyQ8_0, Encoding::Q8_0},
    {"q4_0", kMostlyQ4_0, Encoding::Q4_0},   {"q4_1", kMostlyQ4_1, Encoding::Q4_1},
    {"q5_0", kMostlyQ5_0, Encoding::Q5_0},   {"q5_1", kMostlyQ5_1, Encoding::Q5_1},
    {"q4_k", kMostlyQ4_K_S, Encoding::Q4_K}, {"q5_k", kMostlyQ5_K_S, Encoding::Q5_K},
    {"q6_k", kMostlyQ6_K, Encoding::Q6_K},   {"q4_k_m", kMostlyQ4_K_M, Encoding::Q4_K},
};

uint32_t block_elems(Encoding e) { return encoding_info(e).block_elems; }

// llama.cpp spends more bits on the first and last eighth of the layers and
// on every third layer in between.
bool use_more_bits(int layer, int n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

Encoding mixed_encoding(const SynthType& type, const TensorSpec& t, const SynthShape& s) {
  const Encoding base = type.base;
  const uint32_t ft = type.file_type;
  const int n_layer = static_cast<int>(s.n_layer);
  // llama.cpp's Mixtral tweaks key on exactly eight experts.
  const bool eight_experts = s.n_expert == 8;

  // A tied token_embd is also the output projection and is typed like it.
  if (t.role == TensorRole::Output || (s.tied && t.role == TensorRole::TokenEmbd)) {
    if (t.dims[0] % block_elems(base) != 0) return Encoding::Q8_0;
    return base == Encoding::Q8_0 ? base : Encoding::Q6_K;
  }
  switch (t.role) {
    case TensorRole::AttnV: {
      Encoding e = base;
      if (ft == kMostlyQ4_K_M && use_more_bits(t.layer, n_layer))
        e = Encoding::Q6_K;
      else if (ft == kMostlyQ4_K_S && t.layer < 4)
        e = Encoding::Q5_K;
      return eight_experts ? Encoding::Q8_0 : e;
    }
    case TensorRole::AttnK: return eight_experts ? Encoding::Q8_0 : base;
    case TensorRole::FfnDown:
      if (ft == kMostlyQ4_K_M && use_more_bits(t.layer, n_layer)) return Encoding::Q6_K;
      if (ft == kMostlyQ4_K_S && t.layer < n_layer / 8) return Encoding::Q5_K;
      return base;
    case TensorRole::AttnOutput:
      if (eight_experts && (ft == kMostlyQ4_K_S || ft == kMostlyQ4_K_M)) return Encoding::Q5_K;
      return base;
    default: return base;
  }
}

// llama.cpp's fallback for rows that do not split into whole blocks. Where
// llama.cpp defines none (it would refuse the tensor) synth uses F16.
Encoding fit_row(Encoding e, uint64_t row) {
  if (row % block_elems(e) == 0) return e;
  Encoding fallback = Encoding::F16;
  switch (e) {
    case Encoding::Q4_K: fallback = Encoding::Q5_0; break;
    case Encoding::Q5_K: fallback = Encoding::Q5_1; break;
    case Encoding::Q6_K: fallback = Encoding::Q8_0; break;
    default: break;
  }
  return row % block_elems(fallback) == 0 ? fallback : Encoding::F16;
}

}  // namespace

const SynthType& find_type(const std::string& name) {
  const std::string wanted = name.empty() ? "f32" : name;
  for (const SynthType& t : kTypes)
    if (wanted == t.name) return t;
  throw_unknown("type", wanted, type_names());
}

std::vector<std::string> type_names() {
  std::vector<std::string> names;
  for (const SynthType& t : kTypes) names.emplace_back(t.name);
  return names;
}

bool is_quantized(const SynthType& type) {
  return type.base != Encoding::F32 && type.base != Encoding::F16 && type.base != Encoding::BF16;
}

Encoding choose_encoding(const SynthType& type, const TensorSpec& t, const SynthShape& shape,
                         bool pure) {
  if (t.dims.size() < 2 || t.role == TensorRole::Router) return Encoding::F32;
  if (!is_quantized(type)) return type.base;
  return fit_row(pure ? type.base : mixed_encoding(type, t, shape), t.dims[0]);
}

}  // namespace synapse::synth
