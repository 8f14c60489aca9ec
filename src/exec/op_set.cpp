#include "exec/op_set.h"

namespace synapse::exec {

void OpSet::matmul(StepContext& ctx, const float* x, int64_t tokens, const ref::EncodedMatrix& w, const float* bias,
                   float* y) const {
  ref::matmul(x, tokens, w, bias, y, ctx.scratch.weight_row.data(), ctx.accumulation);
}

void OpSet::swiglu(StepContext&, const float* gate, const float* up, float* y, int64_t n) const {
  ref::swiglu(gate, up, y, n);
}

void OpSet::attention(StepContext& ctx, const float* q, const int32_t* positions, int64_t tokens,
                      const ref::StateRows& k, const ref::StateRows& v, const ref::AttentionShape& shape,
                      float* out) const {
  ref::causal_attention(q, positions, tokens, k, v, shape, out, ctx.scratch.scores.data(), ctx.accumulation);
}

const OpSet& reference_ops() {
  static const OpSet ops;
  return ops;
}

}  // namespace synapse::exec
