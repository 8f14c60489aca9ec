// A draft model for speculative decoding (-md): a smaller model of the
// same vocabulary proposes tokens greedily from its own session.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/session.h"
#include "generate/speculative.h"
#include "model/model.h"
#include "tokenizer/vocabulary.h"

namespace synapse {

// Throws Error(InvalidValue) unless both vocabularies hold the same token
// table: the SHA-256 of each table is compared, and a mismatch names the
// first id whose token differs (or the sizes).
void require_same_vocabulary(const Vocabulary& target, const Vocabulary& draft);

class ModelDrafter : public Drafter {
 public:
  // The model must outlive the drafter.
  ModelDrafter(const Model& model, exec::SessionOptions options);
  std::vector<int32_t> draft(std::span<const int32_t> context, int max) override;

 private:
  exec::Session session_;
  std::vector<int32_t> evaluated_;  // the tokens whose KV the session holds, in order
};

}  // namespace synapse
