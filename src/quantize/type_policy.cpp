// The branches of llama.cpp's llama_tensor_get_type_impl that apply to the
// file types of quant_types.h (the IQ, Q2_K, Q3_K and MXFP4 ones do not).
#include "quantize/type_policy.h"

#include "quantize/tensor_category.h"
#include "synapse/error.h"

namespace synapse::quant {

namespace {

// llama_ftype values of the mixes (llama.h).
constexpr uint32_t kQ4_0 = 2, kQ5_0 = 8, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_M = 17;

uint32_t block_elems(Encoding e) { return encoding_info(e).block_elems; }

// llama.cpp spends more bits on the first and last eighth of the layers and
// on every third layer in between.
bool use_more_bits(int layer, int n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

// llama.cpp's LLM_TYPE_70B, the one model size its mix looks at (its
// loaders set it by block count).
bool is_70b(const ModelFacts& m) {
  if (m.arch == "llama") return m.n_expert != 8 && m.n_layer == 80 && m.n_head != m.n_head_kv;
  if (m.arch == "qwen2" || m.arch == "olmo" || m.arch == "deci") return m.n_layer == 80;
  return m.arch == "jais2" && m.n_layer == 68;
}

// llama.cpp's quantize_state_impl: what the mix has seen so far.
class Mix {
 public:
  Mix(const QuantType& type, const ModelFacts& model, std::span<const TensorToType> tensors, bool has_imatrix)
      : ft_(type.file_type),
        m_(model),
        falcon_(model.arch == "falcon"),
        big_(is_70b(model)),
        has_imatrix_(has_imatrix) {
    for (const TensorToType& t : tensors) {
      const TensorCategory c = tensor_category(t.name);
      if (is_attn_v_like(c)) ++n_attn_v_;
      if (c == TensorCategory::Output) tied_ = false;  // else token_embd is also the output
    }
  }

  Encoding choose(const TensorToType& t, Encoding e) {
    const TensorCategory c = tensor_category(t.name);
    const bool eight_experts = m_.n_expert == 8;
    if (c == TensorCategory::Output || (tied_ && c == TensorCategory::TokenEmbd)) {
      if (falcon_ || t.dims[0] % block_elems(e) != 0) return Encoding::Q8_0;
      return e == Encoding::Q8_0 ? e : Encoding::Q6_K;
    }
    if (is_attn_v_like(c)) {
      if ((ft_ == kQ4_K_M || ft_ == kQ5_K_M) && use_more_bits(i_attn_v_, n_attn_v_))
        e = Encoding::Q6_K;
      else if (ft_ == kQ4_K_S && i_attn_v_ < 4)
        e = Encoding::Q5_K;
      // A 70B model's attn_v is 8x smaller than attn_q (GQA): more bits are cheap.
      if (big_ && e == Encoding::Q4_K) e = Encoding::Q5_K;
      if (eight_experts) e = Encoding::Q8_0;
      ++i_attn_v_;
      return e;
    }
    switch (c) {
      case TensorCategory::AttnK: return eight_experts ? Encoding::Q8_0 : e;
      case TensorCategory::FfnDown: return ffn_down(t, e);
      case TensorCategory::AttnOutput:
        if (!falcon_ && eight_experts && (ft_ == kQ4_K_S || ft_ == kQ4_K_M)) return Encoding::Q5_K;
        return e;
      default: return e;
    }
  }

 private:
  Encoding ffn_down(const TensorToType& t, Encoding e) {
    const int n = static_cast<int>(m_.n_layer);
    int layer = i_ffn_down_++;
    // An expert model's FFN tensors need not come one per block in order:
    // llama.cpp reads the block from the name.
    if (m_.n_expert > 1) {
      layer = block_index(t.name);
      if (layer < 0 || layer >= n)
        throw Error(ErrorKind::InvalidValue,
                    "no block index below " + std::to_string(n) + " in the name of an expert model's FFN tensor",
                    Error::kNoOffset, std::string(t.name));
    }
    if (ft_ == kQ4_K_M) {
      if (falcon_)
        return layer < n / 16 ? Encoding::Q6_K : use_more_bits(layer, n) ? Encoding::Q5_K : Encoding::Q4_K;
      return use_more_bits(layer, n) ? Encoding::Q6_K : e;
    }
    if (ft_ == kQ5_K_M && use_more_bits(layer, n)) return Encoding::Q6_K;
    if (ft_ == kQ4_K_S && !falcon_ && layer < n / 8) return Encoding::Q5_K;
    // "Guard against craziness in the first few ffn_down layers": only with
    // an imatrix, so that one without gets the same file as before it.
    if ((ft_ == kQ4_0 || ft_ == kQ5_0) && has_imatrix_ && layer < n / 8)
      return ft_ == kQ4_0 ? Encoding::Q4_1 : Encoding::Q5_1;
    return e;
  }

  uint32_t ft_;
  const ModelFacts& m_;
  bool falcon_;
  bool big_;
  bool has_imatrix_;
  bool tied_ = true;
  int n_attn_v_ = 0;
  int i_attn_v_ = 0;
  int i_ffn_down_ = 0;
};

}  // namespace

// llama.cpp's fallback for rows that do not split into whole blocks. The
// three 256-element types are the only ones the mixes above produce; a
// 32-element type has no smaller block to go to. F16 when that still does
// not fit.
Encoding fit_row(Encoding e, uint64_t row) {
  if (row % block_elems(e) == 0) return e;
  Encoding fallback = e;
  switch (e) {
    case Encoding::Q4_K: fallback = Encoding::Q5_0; break;
    case Encoding::Q5_K: fallback = Encoding::Q5_1; break;
    case Encoding::Q6_K: fallback = Encoding::Q8_0; break;
    default: break;
  }
  return row % block_elems(fallback) == 0 ? fallback : Encoding::F16;
}

std::vector<TypeChoice> choose_types(const QuantType& type, const ModelFacts& model,
                                     std::span<const TensorToType> tensors, bool pure, bool has_imatrix,
                                     std::span<const TensorTypeOverride> overrides) {
  Mix mix(type, model, tensors, has_imatrix);
  std::vector<TypeChoice> out;
  out.reserve(tensors.size());
  for (const TensorToType& t : tensors) {
    if (!allows_quantization(t.name, t.dims)) {
      out.push_back({t.stored});
    } else if (!is_quantized(type)) {
      out.push_back({type.base});
    } else if (const TensorTypeOverride* o = find_override(overrides, t.name)) {
      out.push_back({fit_row(o->type, t.dims[0]), o});
    } else {
      out.push_back({fit_row(pure ? type.base : mix.choose(t, type.base), t.dims[0])});
    }
  }
  return out;
}

std::vector<Encoding> choose_encodings(const QuantType& type, const ModelFacts& model,
                                       std::span<const TensorToType> tensors, bool pure, bool has_imatrix) {
  std::vector<Encoding> out;
  for (const TypeChoice& c : choose_types(type, model, tensors, pure, has_imatrix, {})) out.push_back(c.encoding);
  return out;
}

}  // namespace synapse::quant
