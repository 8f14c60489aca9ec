// Q4_K, Q5_K and Q6_K encoders compiled once per CpuTarget (Google
// Highway, see hwy_targets.h) that write exactly the bytes of the reference
// codecs (encoding/codecs.h, themselves byte-identical to ggml's).
//
// The reference fits a sub-block's levels by trying ~20 grid scales one
// after the other (encoding/k_quant_fit.h). These encoders fit a whole
// vector of sub-blocks at once, one sub-block per lane: every lane performs
// its sub-block's scalar sequence of float operations (no FMA, the same
// association order, the same rounding trick and tie breaks), so each lane
// ends with the reference's bits. The trials cannot be spread over the
// lanes instead: in Q4_K / Q5_K each improving trial moves the offset the
// next trial's grid starts from.
//
// cpu::encode_row is synapse::quantize_row with the best target's
// encoders for these three: what every path that encodes weights or state
// calls (synapse quantize, synth --type, the KV cache).
#pragma once

#include <cstdint>

#include "encoding/codecs.h"
#include "encoding/encoding.h"
#include "kernels/cpu/cpu_target.h"

namespace synapse::cpu {

struct KQuantEncoders {
  codecs::QuantizeFn q4_k = nullptr;
  codecs::QuantizeFn q5_k = nullptr;
  codecs::QuantizeFn q6_k = nullptr;
};

// The encoders compiled for exactly `target`; on builds for other
// architectures than x86 only CpuTarget::Scalar has them (nulls otherwise).
KQuantEncoders kquant_encoders(CpuTarget target);

// synapse::quantize_row (encoding.h), the same bytes and errors, through
// kquant_encoders(best_cpu_target()) for Q4_K, Q5_K and Q6_K.
void encode_row(Encoding e, const float* src, void* dst, int64_t n);

// Its parts: kquant_offset_encode.cpp (Q4_K, Q5_K) and
// kquant_symmetric_encode.cpp (Q6_K).
codecs::QuantizeFn q4_k_encoder(CpuTarget target);
codecs::QuantizeFn q5_k_encoder(CpuTarget target);
codecs::QuantizeFn q6_k_encoder(CpuTarget target);

}  // namespace synapse::cpu
