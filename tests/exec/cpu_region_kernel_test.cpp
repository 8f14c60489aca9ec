// Sessions on the CPU region kernel: close to the reference kernel on real
// architectures and encodings, and batch invariant: a token's logits are
// bit-identical whether it is evaluated in a prefill chunk, alone in a
// decode step, with any thread count.
#include "exec/cpu_region_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "exec/session.h"
#include "synapse/error.h"
#include "model/model.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::exec {
namespace {

std::vector<float> logits_of_each_token(Session& session, const std::vector<int32_t>& tokens, bool one_by_one) {
  if (!one_by_one) return session.eval_all(tokens);
  std::vector<float> all;
  for (int32_t token : tokens) {
    const std::span<const float> row = session.eval(std::span(&token, 1));
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

Session cpu_session(const Model& model, int threads, cpu::CpuTarget target = cpu::best_cpu_target()) {
  SessionOptions options;
  options.kernels = cpu_kernel_registry({threads, target});
  options.all_logits = true;
  // F32 KV: an F16 cache would round keys the two kernels computed a few
  // ulps apart onto different halves, hiding the kernels' own agreement
  // (KV encodings are tested against each other in kv_encoding_test).
  options.kv = {Encoding::F32, Encoding::F32};
  return Session(model, options);
}

const std::vector<int32_t> kPrompt{1, 17, 200, 33, 4, 99, 120, 7, 64, 250, 3, 12, 180};

TEST(CpuRegionKernel, BindsEveryRegionOfALoadedModel) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2", "q8_0"));
  Session session = cpu_session(model, 2);
  for (ir::RegionId region : session.scheduler().order())
    EXPECT_STREQ(session.scheduler().kernel(region).name(),
                 (std::string("cpu-") + cpu::to_string(cpu::best_cpu_target())).c_str());
}

TEST(CpuRegionKernel, LogitsStayCloseToTheReferenceKernel) {
  test::TempDir dir;
  for (const char* arch : {"llama", "qwen2", "qwen3"})
    for (const char* type : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q6_k"}) {
      const Model model = load_model(test::write_tiny_model(dir, arch, type, std::string(arch) + type + ".gguf"));
      SessionOptions all_rows;
      all_rows.all_logits = true;
      all_rows.kv = {Encoding::F32, Encoding::F32};
      Session reference(model, all_rows);
      const std::vector<float> expected = reference.eval_all(kPrompt);
      for (cpu::CpuTarget target : cpu::supported_cpu_targets()) {
        Session session = cpu_session(model, 2, target);
        const std::vector<float> actual = session.eval_all(kPrompt);
        ASSERT_EQ(actual.size(), expected.size());
        double worst = 0.0, scale = 0.0;
        for (size_t i = 0; i < actual.size(); ++i) {
          worst = std::max(worst, std::fabs(double{actual[i]} - expected[i]));
          scale = std::max(scale, std::fabs(double{expected[i]}));
        }
        // Int8 activations cost accuracy for quantized weights; float
        // weights keep float activations.
        const bool int8 = std::string(type).find('q') == 0;
        EXPECT_LT(worst, (int8 ? 0.03 : 1e-4) * std::max(1.0, scale))
            << arch << " " << type << " " << cpu::to_string(target);
      }
    }
}

TEST(CpuRegionKernel, TokenLogitsAreBitIdenticalAcrossChunkingAndThreads) {
  test::TempDir dir;
  for (const char* type : {"q8_0", "q4_k", "f16"}) {
    const Model model = load_model(test::write_tiny_model(dir, "qwen2", type, std::string(type) + ".gguf"));
    Session prefill = cpu_session(model, 2);
    Session decode = cpu_session(model, 1);
    const std::vector<float> chunked = logits_of_each_token(prefill, kPrompt, false);
    const std::vector<float> single = logits_of_each_token(decode, kPrompt, true);
    ASSERT_EQ(chunked.size(), single.size());
    EXPECT_EQ(0, std::memcmp(chunked.data(), single.data(), chunked.size() * sizeof(float))) << type;
  }
}

TEST(CpuRegionKernel, SessionsRunningAtOnceOnTheSharedWorkersGetTheirAloneResults) {
  test::TempDir dir;
  const Model model = load_model(test::write_tiny_model(dir, "qwen2", "q8_0"));
  Session alone = cpu_session(model, 2);
  const std::vector<float> expected = alone.eval_all(kPrompt);
  auto evaluate = [&](int threads, std::vector<float>* last) {
    Session session = cpu_session(model, threads);
    for (int round = 0; round < 4; ++round) {
      session.reset();
      *last = session.eval_all(kPrompt);
    }
  };
  std::vector<float> a, b;
  std::thread first(evaluate, 2, &a), second(evaluate, 3, &b);
  first.join();
  second.join();
  ASSERT_EQ(a.size(), expected.size());
  ASSERT_EQ(b.size(), expected.size());
  EXPECT_EQ(0, std::memcmp(a.data(), expected.data(), a.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(b.data(), expected.data(), b.size() * sizeof(float)));
}

TEST(CpuRegionKernel, RejectsBadOptions) {
  EXPECT_THROW(cpu_kernel_registry({0, cpu::CpuTarget::Scalar}), Error);
}

}  // namespace
}  // namespace synapse::exec
