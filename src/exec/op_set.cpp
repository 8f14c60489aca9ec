#include "exec/op_set.h"

namespace synapse::exec {

void OpSet::matmul(StepContext& ctx, const float* x, int64_t tokens, const ref::EncodedMatrix& w, const float* bias,
                   float* y) const {
  ref::matmul(x, tokens, w, bias, y, ctx.scratch.weight_row.data(), ctx.accumulation);
}

void OpSet::silu(StepContext&, const float* x, float* y, int64_t n) const { ref::silu(x, y, n); }

void OpSet::swiglu(StepContext&, const float* gate, const float* up, float* y, int64_t n) const {
  ref::swiglu(gate, up, y, n);
}

void OpSet::attention(StepContext& ctx, const float* q, const int32_t* positions, int64_t tokens,
                      const ref::StateRows& k, const ref::StateRows& v, const ref::AttentionShape& shape,
                      float* out) const {
  ref::causal_attention(q, positions, tokens, k, v, shape, out, ctx.scratch.scores.data(), ctx.accumulation);
}

void OpSet::rope(StepContext&, const float* x, const int32_t* positions, int64_t tokens, int64_t width,
                 const ref::RopeParams& params, float* y) const {
  ref::rope(x, positions, tokens, width, params, y);
}

void OpSet::run_shares(int64_t n, int64_t, ShareFn fn, const void* share) const { fn(share, 0, n); }

const OpSet& reference_ops() {
  static const OpSet ops;
  return ops;
}

}  // namespace synapse::exec
