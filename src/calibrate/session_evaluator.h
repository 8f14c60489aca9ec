// A ChunkEvaluator on a synapse session (perplexity.h), for the tools that
// walk a text in llama-perplexity's chunks: perplexity, imatrix,
// sensitivity.
#pragma once

#include <cstdint>
#include <span>

#include "eval/perplexity.h"
#include "exec/session.h"
#include "model/model.h"

namespace synapse::calibrate {

// Evaluates a chunk in steps of at most the model's chunk from an empty
// context, keeping the logits rows of the scored positions only.
class SessionEvaluator : public eval::ChunkEvaluator {
 public:
  // Owns the model; options.logits_rows becomes a whole step's.
  SessionEvaluator(Model model, exec::SessionOptions options);

  int64_t vocab() const override { return session_.vocab(); }
  void eval(std::span<const int32_t> tokens, int64_t first, std::span<float> rows) override;

  const Model& model() const { return model_; }
  exec::Session& session() { return session_; }

 private:
  Model model_;
  exec::Session session_;  // after model_: it refers to it
};

}  // namespace synapse::calibrate
