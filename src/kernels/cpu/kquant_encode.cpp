#include "kernels/cpu/kquant_encode.h"

#include "encoding/blocks.h"
#include "encoding/encoding.h"

namespace synapse::cpu {

KQuantEncoders kquant_encoders(CpuTarget target) {
  return {q4_k_encoder(target), q5_k_encoder(target), q6_k_encoder(target)};
}

void encode_row(Encoding e, const float* src, void* dst, int64_t n) {
  static const KQuantEncoders best = kquant_encoders(best_cpu_target());
  codecs::QuantizeFn encoder = nullptr;
  if (e == Encoding::Q4_K) encoder = best.q4_k;
  if (e == Encoding::Q5_K) encoder = best.q5_k;
  if (e == Encoding::Q6_K) encoder = best.q6_k;
  // A row that is not whole blocks gets synapse::quantize_row's error.
  if (!encoder || n % blocks::kSuperElems != 0) return synapse::quantize_row(e, src, dst, n);
  encoder(src, dst, n / blocks::kSuperElems);
}

}  // namespace synapse::cpu
