// The ops whose implementation a region kernel chooses: the heavy ones
// (matrix products, attention). The base class runs the reference ops, so
// the reference kernel and the interpreter share one implementation; a CPU
// kernel overrides them with threaded SIMD code. Everything else a node
// does is cheap and always runs on the reference ops.
#pragma once

#include <cstdint>

#include "exec/step_context.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/linear.h"

namespace synapse::exec {

class OpSet {
 public:
  virtual ~OpSet() = default;
  virtual const char* name() const { return "reference"; }

  // y[t, o] = x[t, :] . w[o, :] (+ bias[o]); x is [tokens, w.cols].
  virtual void matmul(StepContext& ctx, const float* x, int64_t tokens, const ref::EncodedMatrix& w,
                      const float* bias, float* y) const;
  // y = silu(gate) * up over n elements.
  virtual void swiglu(StepContext& ctx, const float* gate, const float* up, float* y, int64_t n) const;
  // As ref::causal_attention.
  virtual void attention(StepContext& ctx, const float* q, const int32_t* positions, int64_t tokens,
                         const ref::StateRows& k, const ref::StateRows& v, const ref::AttentionShape& shape,
                         float* out) const;
};

const OpSet& reference_ops();

}  // namespace synapse::exec
