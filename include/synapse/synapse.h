// Synapse's public C++ API: load a model, open a session, feed tokens, read
// logits, sample. Everything runs through the region scheduler.
//
//   synapse::LoadedModel model = synapse::LoadedModel::open("model.gguf");
//   synapse::InferenceSession session(model);
//   synapse::TokenSampler sampler(model, {.temp = 0});  // greedy
//   std::vector<int32_t> prompt = {1};
//   auto logits = session.eval(prompt);
//   int32_t next = sampler.sample(logits);
//
// Errors are synapse::Error (synapse/error.h) with a kind, and where it
// applies the byte offset and the key or tensor concerned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "synapse/error.h"
#include "synapse/sampling.h"

namespace synapse {

struct ModelOptions {
  uint32_t context = 0;  // tokens a session can hold; 0: the model's, at most 4096
  uint32_t batch = 512;  // most tokens evaluated per step (longer prompts are split)
};

// A model file (GGUF or llama2.c checkpoint) compiled into a verified region
// graph. Weights stay in the read-only mapped file. Cheap to copy (shared).
class LoadedModel {
 public:
  static LoadedModel open(const std::string& path, const ModelOptions& options = {});

  std::string architecture() const;
  int32_t vocab_size() const;
  int32_t context_size() const;
  std::optional<int32_t> bos_token() const;
  std::optional<int32_t> eos_token() const;
  // The canonical SHA-256 of the region graph, in hex.
  std::string fingerprint() const;

  struct Impl;

 private:
  explicit LoadedModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
  friend class InferenceSession;
  friend class TokenSampler;
};

// How the KV cache stores keys and values (llama.cpp's --cache-type-k/v).
enum class KvCacheType { F16, Q8_0, F32 };

struct SessionConfig {
  int threads = 0;         // threads of the session's CPU kernels; 0: one per physical core available
  bool reference = false;  // run the scalar reference kernels (the oracle) instead
  KvCacheType cache_type_k = KvCacheType::F16;
  KvCacheType cache_type_v = KvCacheType::F16;
};

// One sequence's state (its KV cache and position) over a model.
class InferenceSession {
 public:
  explicit InferenceSession(const LoadedModel& model, const SessionConfig& config = {});
  ~InferenceSession();
  InferenceSession(InferenceSession&&) noexcept;
  InferenceSession& operator=(InferenceSession&&) noexcept;

  // Evaluates tokens at the next positions; returns the last token's logits
  // (vocab_size floats), valid until the next call. Out-of-vocabulary ids
  // and context overflow throw before any compute.
  std::span<const float> eval(std::span<const int32_t> tokens);
  int64_t position() const;
  // Forgets every token.
  void reset();
  // Makes a running eval throw Error(Cancelled) between regions; the
  // session stays usable. With no eval running it does nothing.
  void cancel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Picks the next token from a logits row with llama.cpp's sampler chain.
class TokenSampler {
 public:
  TokenSampler(const LoadedModel& model, const SamplingParams& params);
  ~TokenSampler();
  TokenSampler(TokenSampler&&) noexcept;
  TokenSampler& operator=(TokenSampler&&) noexcept;

  int32_t sample(std::span<const float> logits);
  // Records a token (prompt or emitted) for the repetition penalties.
  void accept(int32_t token);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace synapse
