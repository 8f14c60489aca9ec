// The ops whose implementation a region kernel chooses: matrix products,
// attention, the activations and RoPE, and how the cheap row- and
// element-wise ops are split over threads. The base class runs the
// reference ops in one piece, so the reference kernel and the interpreter
// share one implementation; a CPU kernel overrides them with threaded SIMD
// code.
#pragma once

#include <cstdint>

#include "exec/step_context.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/linear.h"
#include "kernels/ref/rope.h"

namespace synapse::exec {

class OpSet {
 public:
  virtual ~OpSet() = default;
  virtual const char* name() const { return "reference"; }

  // y[t, o] = x[t, :] . w[o, :] (+ bias[o]); x is [tokens, w.cols].
  virtual void matmul(StepContext& ctx, const float* x, int64_t tokens, const ref::EncodedMatrix& w,
                      const float* bias, float* y) const;
  // y = silu(x) over n elements.
  virtual void silu(StepContext& ctx, const float* x, float* y, int64_t n) const;
  // y = silu(gate) * up over n elements.
  virtual void swiglu(StepContext& ctx, const float* gate, const float* up, float* y, int64_t n) const;
  // As ref::causal_attention.
  virtual void attention(StepContext& ctx, const float* q, const int32_t* positions, int64_t tokens,
                         const ref::StateRows& k, const ref::StateRows& v, const ref::AttentionShape& shape,
                         float* out) const;
  // As ref::rope.
  virtual void rope(StepContext& ctx, const float* x, const int32_t* positions, int64_t tokens, int64_t width,
                    const ref::RopeParams& params, float* y) const;

  // Calls share(begin, end) on shares that together cover [0, n) once, each
  // a multiple of `grain` items except the last: for ops whose items are
  // computed independently of each other, so that no split changes a bit.
  template <class Share>
  void for_shares(int64_t n, int64_t grain, const Share& share) const {
    run_shares(
        n, grain, [](const void* s, int64_t begin, int64_t end) { (*static_cast<const Share*>(s))(begin, end); },
        &share);
  }

 protected:
  using ShareFn = void (*)(const void* share, int64_t begin, int64_t end);
  // The reference ops run [0, n) as one share.
  virtual void run_shares(int64_t n, int64_t grain, ShareFn fn, const void* share) const;
};

const OpSet& reference_ops();

}  // namespace synapse::exec
