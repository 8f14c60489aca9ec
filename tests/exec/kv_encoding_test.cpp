// F16 and Q8_0 KV caches against an F32 one: the logits of a synthetic
// model over 256 positions stay within tolerances that follow from each
// encoding's rounding (see the comments at the bounds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::exec {
namespace {

constexpr int64_t kPositions = 256;

std::vector<float> logits_with(const Model& model, Encoding kv, const std::vector<int32_t>& prompt) {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({2, cpu::best_cpu_target()});
  options.kv = {kv, kv, 64};  // four pages
  options.all_logits = true;
  Session session(model, options);
  return session.eval_all(prompt);
}

// The largest logit difference, relative to the largest logit magnitude.
float relative_error(const std::vector<float>& got, const std::vector<float>& exact) {
  float worst = 0.0f, scale = 0.0f;
  for (size_t i = 0; i < exact.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - exact[i]));
    scale = std::max(scale, std::abs(exact[i]));
  }
  return worst / scale;
}

TEST(ExecKvEncoding, F16AndQ8_0StayWithinTheirRoundingOfF32Over256Positions) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2", "f32"),
                                 LoadOptions{.max_ctx = kPositions, .chunk = 64});
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(model.info.n_vocab) - 1);
  std::vector<int32_t> prompt(kPositions);
  for (int32_t& t : prompt) t = token(rng);
  const std::vector<float> exact = logits_with(model, Encoding::F32, prompt);
  const float f16 = relative_error(logits_with(model, Encoding::F16, prompt), exact);
  const float q8_0 = relative_error(logits_with(model, Encoding::Q8_0, prompt), exact);
  std::printf("relative logit error over %lld positions: f16 %.3g, q8_0 %.3g\n", static_cast<long long>(kPositions),
              f16, q8_0);
  EXPECT_GT(f16, 0.0f);  // the cache really stores F16
  // F16 rounds each key and value element by at most 2^-11 (4.9e-4) of
  // itself; through two layers' softmax and projections that stays a few
  // times the same order (5.9e-4 measured): 4e-3 is ~8x the per-element
  // rounding and far below what a wrong row or head (O(1)) would give.
  EXPECT_LT(f16, 4e-3f);
  // Q8_0 rounds each element by up to half a step of its block's scale,
  // max|block| / 254 (~0.4% of the block's largest element, more relative
  // to the small ones): 1.0e-2 measured, bound 5e-2.
  EXPECT_LT(q8_0, 5e-2f);
  EXPECT_LT(f16, q8_0);
}

}  // namespace
}  // namespace synapse::exec
