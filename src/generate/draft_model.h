// A draft model for speculative decoding (-md): a smaller model of the
// same vocabulary proposes tokens greedily from its own session.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "exec/session.h"
#include "generate/sampler.h"
#include "generate/speculative.h"
#include "model/model.h"
#include "tokenizer/vocabulary.h"

namespace synapse {

// Throws Error(InvalidValue) unless both vocabularies hold the same token
// table: the SHA-256 of each table is compared, and a mismatch names the
// first id whose token differs (or the sizes).
void require_same_vocabulary(const Vocabulary& target, const Vocabulary& draft);

// Drafts greedily, or with temp > 0 draws each draft from the draft
// model's distribution under `sampling` (its penalties left out: any
// distribution keeps speculative sampling exact, this one is cheap).
class ModelDrafter : public Drafter {
 public:
  // The model must outlive the drafter.
  ModelDrafter(const Model& model, exec::SessionOptions options, const SamplingParams& sampling = {});
  std::vector<int32_t> draft(std::span<const int32_t> context, int max) override;
  std::span<const float> draft_distributions() const override { return q_; }

 private:
  exec::Session session_;
  std::vector<int32_t> evaluated_;  // the tokens whose KV the session holds, in order
  std::optional<Sampler> sampler_;  // when drafts are sampled
  std::vector<float> rows_;         // their distributions: a row per draft, grown once
  std::span<const float> q_;
};

}  // namespace synapse
