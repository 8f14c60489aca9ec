// RAII wrappers over a llama.cpp model and context, CPU only, with every
// llama call's result checked (failures throw PeerError).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama_api.h"

namespace synapse::peer {

class LlamaModel {
 public:
  // Loads `path` with all layers on the CPU. `vocab_only` skips the weights
  // (enough for tokenizing).
  LlamaModel(const LlamaApi& api, const std::string& path, bool vocab_only = false);
  ~LlamaModel();
  LlamaModel(const LlamaModel&) = delete;
  LlamaModel& operator=(const LlamaModel&) = delete;

  llama_model* get() const { return model_; }
  const llama_vocab* vocab() const { return vocab_; }
  int32_t n_vocab() const { return n_vocab_; }
  // llama_tokenize: BOS (and EOS) where the vocabulary asks for them with
  // add_special; special tokens' text matched with parse_special.
  std::vector<llama_token> tokenize(const std::string& text, bool add_special, bool parse_special) const;
  // The BOS token when the vocabulary adds one to a text, else -1.
  llama_token added_bos() const;

 private:
  const LlamaApi& api_;
  llama_model* model_ = nullptr;
  const llama_vocab* vocab_ = nullptr;
  int32_t n_vocab_ = 0;
};

// llama.cpp's defaults are flash attention `auto` (on for the CPU) and an
// F16 KV cache. The stored llama.cpp references (shared/data/reference/
// llamacpp) were made with flash attention off and an F32 cache: with those
// settings the logits match them bit for bit.
struct AttentionOptions {
  int32_t flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
  int32_t kv_type = GGML_TYPE_F16;  // of both K and V
};

struct ContextOptions {
  uint32_t n_ctx = 512;
  // Largest batch one decode() takes; also the physical batch (n_ubatch), so
  // a prompt is evaluated as one graph, as llama-bench's pp test does.
  uint32_t n_batch = 512;
  int32_t n_threads = 1;
  AttentionOptions attention;
};

// A context on one sequence (id 0) with its own batch buffer.
class LlamaSession {
 public:
  LlamaSession(const LlamaApi& api, const LlamaModel& model, const ContextOptions& options);
  ~LlamaSession();
  LlamaSession(const LlamaSession&) = delete;
  LlamaSession& operator=(const LlamaSession&) = delete;

  // Evaluates `tokens` at positions first_pos, first_pos+1, ... Requests
  // logits for every token when `all_logits`, else for the last one only.
  // Returns once the computation has finished.
  void decode(std::span<const llama_token> tokens, llama_pos first_pos, bool all_logits);
  // Logits after token `index` of the last decode() (n_vocab floats, valid
  // until the next decode); only tokens whose logits were requested.
  std::span<const float> logits(int32_t index) const;
  std::span<const float> last_logits() const { return logits(n_decoded_ - 1); }
  // Empties the KV cache (memory), so the next decode starts at position 0.
  void clear_memory();

  int32_t n_vocab() const { return n_vocab_; }
  uint32_t n_batch() const { return options_.n_batch; }

 private:
  const LlamaApi& api_;
  ContextOptions options_;
  int32_t n_vocab_ = 0;
  llama_context* ctx_ = nullptr;
  llama_batch batch_{};
  int32_t n_decoded_ = 0;  // tokens in the last decode()
  bool all_logits_ = false;
};

}  // namespace synapse::peer
