// A tiny served model for the serve tests: a random-weight qwen2 GGUF with a
// vocabulary, its tokenizer, a session of `slots` sequences and a batch
// engine over them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/batch_evaluator.h"
#include "exec/cpu_region_kernel.h"
#include "exec/session.h"
#include "generate/chat_session.h"
#include "kernels/cpu/cpu_target.h"
#include "model/model.h"
#include "serve/batch_engine.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "tokenizer/tokenizer.h"

namespace synapse::serve::test {

struct ServedTinyModel {
  explicit ServedTinyModel(int slots = 4, size_t queue_capacity = 16, uint32_t max_ctx = 1024)
      : path(synapse::test::write_tiny_model(dir, "qwen2")),
        tokenizer(load_tokenizer(path)),
        model(load_model(path, LoadOptions{.max_ctx = max_ctx, .chunk = 64})) {
    exec::SessionOptions options;
    options.kernels = exec::cpu_kernel_registry({2, cpu::best_cpu_target()});
    options.logits_rows = slots;
    session = std::make_unique<exec::Session>(model, options);
    evaluator = std::make_unique<exec::SessionEvaluator>(*session);
    EngineOptions engine_options;
    engine_options.slots = slots;
    engine_options.queue_capacity = queue_capacity;
    engine_options.end_ids = end_of_turn_ids(tokenizer->vocabulary());
    engine = std::make_unique<BatchEngine>(*evaluator, *tokenizer, metrics, engine_options);
  }

  synapse::test::TempDir dir;
  std::string path;
  std::unique_ptr<Tokenizer> tokenizer;
  Model model;
  ServerMetrics metrics;
  std::unique_ptr<exec::Session> session;
  std::unique_ptr<exec::SessionEvaluator> evaluator;
  std::unique_ptr<BatchEngine> engine;
};

}  // namespace synapse::serve::test
