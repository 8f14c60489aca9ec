#include "llama_session.h"

#include <climits>
#include <filesystem>

#include "peer_error.h"

namespace synapse::peer {

LlamaModel::LlamaModel(const LlamaApi& api, const std::string& path, bool vocab_only) : api_(api) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw PeerError(kExitFailed, "no such model file: " + path);
  }
  llama_model_params params = api.model_default_params();
  params.n_gpu_layers = 0;
  params.split_mode = LLAMA_SPLIT_MODE_NONE;
  params.vocab_only = vocab_only;
  model_ = api.model_load_from_file(path.c_str(), params);
  if (model_ == nullptr) {
    throw PeerError(kExitFailed,
                    "llama.cpp cannot load model " + path + " (run with -v for its log)");
  }
  vocab_ = api.model_get_vocab(model_);
  n_vocab_ = vocab_ != nullptr ? api.vocab_n_tokens(vocab_) : 0;
  if (n_vocab_ <= 0) {
    api.model_free(model_);
    throw PeerError(kExitFailed, "model " + path + " has no vocabulary");
  }
}

LlamaModel::~LlamaModel() { api_.model_free(model_); }

std::vector<llama_token> LlamaModel::tokenize(const std::string& text, bool add_special, bool parse_special) const {
  if (text.size() > INT32_MAX) throw PeerError(kExitUsage, "text too long");
  const auto text_len = static_cast<int32_t>(text.size());
  std::vector<llama_token> tokens(text.size() + 2);
  int32_t n = api_.tokenize(vocab_, text.data(), text_len, tokens.data(), static_cast<int32_t>(tokens.size()),
                            add_special, parse_special);
  if (n < 0 && n != INT32_MIN) {  // buffer too small: -n is the size needed
    tokens.resize(static_cast<size_t>(-n));
    n = api_.tokenize(vocab_, text.data(), text_len, tokens.data(), static_cast<int32_t>(tokens.size()), add_special,
                      parse_special);
  }
  if (n < 0) throw PeerError(kExitFailed, "llama_tokenize failed (" + std::to_string(n) + ")");
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

llama_token LlamaModel::added_bos() const { return api_.vocab_get_add_bos(vocab_) ? api_.vocab_bos(vocab_) : -1; }

LlamaSession::LlamaSession(const LlamaApi& api, const LlamaModel& model,
                           const ContextOptions& options)
    : api_(api), options_(options), n_vocab_(model.n_vocab()) {
  llama_context_params params = api.context_default_params();
  params.n_ctx = options.n_ctx;
  params.n_batch = options.n_batch;
  params.n_ubatch = options.n_batch;
  params.n_threads = options.n_threads;
  params.n_threads_batch = options.n_threads;
  params.flash_attn_type = options.attention.flash_attn_type;
  params.type_k = options.attention.kv_type;
  params.type_v = options.attention.kv_type;
  params.no_perf = true;
  ctx_ = api.init_from_model(model.get(), params);
  if (ctx_ == nullptr) {
    throw PeerError(kExitFailed, "llama.cpp cannot create a context (n_ctx " +
                                     std::to_string(options.n_ctx) + ", n_batch " +
                                     std::to_string(options.n_batch) + "; run with -v)");
  }
  batch_ = api.batch_init(static_cast<int32_t>(options.n_batch), 0, 1);
  if (batch_.token == nullptr) {
    api.free(ctx_);
    throw PeerError(kExitFailed, "llama_batch_init failed");
  }
}

LlamaSession::~LlamaSession() {
  api_.batch_free(batch_);
  api_.free(ctx_);
}

void LlamaSession::decode(std::span<const llama_token> tokens, llama_pos first_pos,
                          bool all_logits) {
  if (tokens.empty() || tokens.size() > options_.n_batch) {
    throw PeerError(kExitFailed, "decode of " + std::to_string(tokens.size()) +
                                     " tokens does not fit a batch of " +
                                     std::to_string(options_.n_batch));
  }
  const auto n = static_cast<int32_t>(tokens.size());
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab_) {
      throw PeerError(kExitFailed, "token id " + std::to_string(tokens[i]) +
                                       " is outside the vocabulary (" + std::to_string(n_vocab_) +
                                       " tokens)");
    }
    batch_.token[i] = tokens[i];
    batch_.pos[i] = first_pos + i;
    batch_.n_seq_id[i] = 1;
    batch_.seq_id[i][0] = 0;
    batch_.logits[i] = all_logits || i == n - 1;
  }
  batch_.n_tokens = n;
  const int32_t status = api_.decode(ctx_, batch_);
  if (status != 0) {
    throw PeerError(kExitFailed, "llama_decode failed with status " + std::to_string(status) +
                                     (status == 1 ? " (no room in the KV cache)" : ""));
  }
  api_.synchronize(ctx_);
  n_decoded_ = n;
  all_logits_ = all_logits;
}

std::span<const float> LlamaSession::logits(int32_t index) const {
  const bool requested =
      index >= 0 && index < n_decoded_ && (all_logits_ || index == n_decoded_ - 1);
  if (!requested) {
    throw PeerError(kExitFailed, "no logits were requested for token " + std::to_string(index));
  }
  const float* row = api_.get_logits_ith(ctx_, index);
  if (row == nullptr) {
    throw PeerError(kExitFailed,
                    "llama_get_logits_ith(" + std::to_string(index) + ") returned no logits");
  }
  return {row, static_cast<size_t>(n_vocab_)};
}

void LlamaSession::clear_memory() {
  llama_memory_t memory = api_.get_memory(ctx_);
  if (memory == nullptr) throw PeerError(kExitFailed, "context has no memory to clear");
  api_.memory_clear(memory, true);
  n_decoded_ = 0;
}

}  // namespace synapse::peer
