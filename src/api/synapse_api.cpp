// The public API (include/synapse/synapse.h) over the internal model,
// session and sampler.
#include "synapse/synapse.h"

#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "kernels/cpu/core_count.h"
#include "generate/sampler.h"
#include "ir/fingerprint.h"
#include "model/model.h"

namespace synapse {

struct LoadedModel::Impl {
  Model model;
};

LoadedModel LoadedModel::open(const std::string& path, const ModelOptions& options) {
  LoadOptions load;
  load.max_ctx = options.context;
  load.chunk = options.batch;
  auto impl = std::make_shared<Impl>();
  impl->model = load_model(path, load);
  return LoadedModel(std::move(impl));
}

std::string LoadedModel::architecture() const { return impl_->model.info.architecture; }
int32_t LoadedModel::vocab_size() const { return static_cast<int32_t>(impl_->model.info.n_vocab); }
int32_t LoadedModel::context_size() const {
  return static_cast<int32_t>(impl_->model.graph.bounds.at("max_ctx"));
}
std::optional<int32_t> LoadedModel::bos_token() const { return impl_->model.info.bos_token; }
std::optional<int32_t> LoadedModel::eos_token() const { return impl_->model.info.eos_token; }
std::string LoadedModel::fingerprint() const { return ir::fingerprint_hex(impl_->model.graph); }

struct InferenceSession::Impl {
  std::shared_ptr<const LoadedModel::Impl> model;  // keeps the model alive
  exec::Session session;
  Impl(std::shared_ptr<const LoadedModel::Impl> m, const SessionConfig& config)
      : model(std::move(m)), session(model->model, options(config)) {}

  static Encoding kv_encoding(KvCacheType type) {
    switch (type) {
      case KvCacheType::Q8_0: return Encoding::Q8_0;
      case KvCacheType::F32: return Encoding::F32;
      case KvCacheType::F16: break;
    }
    return Encoding::F16;
  }

  static exec::SessionOptions options(const SessionConfig& config) {
    exec::SessionOptions options;
    const int threads = config.threads > 0 ? config.threads : cpu::default_thread_count();
    if (!config.reference) options.kernels = exec::cpu_kernel_registry({threads, cpu::best_cpu_target()});
    options.kv.k = kv_encoding(config.cache_type_k);
    options.kv.v = kv_encoding(config.cache_type_v);
    return options;
  }
};

InferenceSession::InferenceSession(const LoadedModel& model, const SessionConfig& config)
    : impl_(std::make_unique<Impl>(model.impl_, config)) {}
InferenceSession::~InferenceSession() = default;
InferenceSession::InferenceSession(InferenceSession&&) noexcept = default;
InferenceSession& InferenceSession::operator=(InferenceSession&&) noexcept = default;

std::span<const float> InferenceSession::eval(std::span<const int32_t> tokens) {
  return impl_->session.eval(tokens);
}
int64_t InferenceSession::position() const { return impl_->session.position(); }
void InferenceSession::reset() { impl_->session.reset(); }
void InferenceSession::cancel() { impl_->session.cancel(); }

struct TokenSampler::Impl {
  Sampler sampler;
};

TokenSampler::TokenSampler(const LoadedModel& model, const SamplingParams& params)
    : impl_(std::make_unique<Impl>(Impl{Sampler(params, model.vocab_size())})) {}
TokenSampler::~TokenSampler() = default;
TokenSampler::TokenSampler(TokenSampler&&) noexcept = default;
TokenSampler& TokenSampler::operator=(TokenSampler&&) noexcept = default;

int32_t TokenSampler::sample(std::span<const float> logits) { return impl_->sampler.sample(logits); }
void TokenSampler::accept(int32_t token) { impl_->sampler.accept(token); }

}  // namespace synapse
