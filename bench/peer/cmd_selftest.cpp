// selftest: checks that our declarations in llama_api.h match the loaded
// libraries, by reading the default parameter structs through them. A field
// out of place shows up as a wrong default.
#include <cstdio>
#include <cstring>
#include <string>

#include "peer_commands.h"
#include "peer_error.h"

namespace synapse::peer {
namespace {

class Checks {
 public:
  template <typename T>
  void expect_eq(const char* what, T actual, T expected) {
    record(what, actual == expected, std::to_string(actual), std::to_string(expected));
  }
  void expect_true(const char* what, bool ok) { record(what, ok, "false", "true"); }
  bool all_passed() const { return failures_ == 0; }

 private:
  void record(const char* what, bool ok, const std::string& actual, const std::string& expected) {
    if (ok) {
      std::printf("ok      %s\n", what);
    } else {
      ++failures_;
      std::printf("FAILED  %s: got %s, expected %s\n", what, actual.c_str(), expected.c_str());
    }
  }
  int failures_ = 0;
};

// Defaults of llama.cpp v0.5.0 (src/llama-model.cpp, src/llama-context.cpp).
// This version has no use_mmap flag: load_mode AUTO resolves to mmap on the CPU.
void check_model_defaults(const LlamaApi& api, Checks& checks) {
  const llama_model_params p = api.model_default_params();
  checks.expect_true("model.devices == NULL", p.devices == nullptr);
  checks.expect_true("model.tensor_buft_overrides == NULL", p.tensor_buft_overrides == nullptr);
  checks.expect_eq("model.n_gpu_layers", p.n_gpu_layers, -1);
  checks.expect_eq("model.split_mode (LAYER)", p.split_mode, 1);
  checks.expect_eq("model.load_mode (AUTO)", p.load_mode, LLAMA_LOAD_MODE_AUTO);
  checks.expect_eq("model.lazy_mode (AUTO)", p.lazy_mode, 1);
  checks.expect_eq("model.main_gpu", p.main_gpu, 0);
  checks.expect_true("model.tensor_split == NULL", p.tensor_split == nullptr);
  checks.expect_true("model.progress_callback == NULL", p.progress_callback == nullptr);
  checks.expect_true("model.kv_overrides == NULL", p.kv_overrides == nullptr);
  checks.expect_true("model.vocab_only false", !p.vocab_only);
  checks.expect_true("model.check_tensors false", !p.check_tensors);
  checks.expect_true("model.use_extra_bufts true", p.use_extra_bufts);
  checks.expect_true("model.no_host false", !p.no_host);
  checks.expect_true("model.no_alloc false", !p.no_alloc);
  checks.expect_true("model.load_mtp false", !p.load_mtp);
}

void check_context_defaults(const LlamaApi& api, Checks& checks) {
  const llama_context_params p = api.context_default_params();
  checks.expect_eq("context.n_ctx", p.n_ctx, 512u);
  checks.expect_eq("context.n_batch", p.n_batch, 2048u);
  checks.expect_eq("context.n_ubatch", p.n_ubatch, 512u);
  checks.expect_eq("context.n_seq_max", p.n_seq_max, 1u);
  checks.expect_eq("context.n_rs_seq", p.n_rs_seq, 0u);
  checks.expect_eq("context.n_outputs_max", p.n_outputs_max, 0u);
  checks.expect_eq("context.n_outputs_max_per_seq", p.n_outputs_max_per_seq, 1u);
  checks.expect_eq("context.n_threads (GGML_DEFAULT_N_THREADS)", p.n_threads, 4);
  checks.expect_eq("context.n_threads_batch", p.n_threads_batch, 4);
  checks.expect_eq("context.ctx_type (DEFAULT)", p.ctx_type, 0);
  checks.expect_eq("context.rope_scaling_type (UNSPECIFIED)", p.rope_scaling_type, -1);
  checks.expect_eq("context.pooling_type (UNSPECIFIED)", p.pooling_type, -1);
  checks.expect_eq("context.attention_type (UNSPECIFIED)", p.attention_type, -1);
  checks.expect_eq("context.flash_attn_type (AUTO)", p.flash_attn_type, LLAMA_FLASH_ATTN_TYPE_AUTO);
  checks.expect_eq("context.rope_freq_base", p.rope_freq_base, 0.0f);
  checks.expect_eq("context.rope_freq_scale", p.rope_freq_scale, 0.0f);
  checks.expect_eq("context.yarn_ext_factor", p.yarn_ext_factor, -1.0f);
  checks.expect_eq("context.yarn_attn_factor", p.yarn_attn_factor, -1.0f);
  checks.expect_eq("context.yarn_beta_fast", p.yarn_beta_fast, -1.0f);
  checks.expect_eq("context.yarn_beta_slow", p.yarn_beta_slow, -1.0f);
  checks.expect_eq("context.yarn_orig_ctx", p.yarn_orig_ctx, 0u);
  checks.expect_eq("context.defrag_thold", p.defrag_thold, -1.0f);
  checks.expect_true("context.cb_eval == NULL", p.cb_eval == nullptr);
  checks.expect_eq("context.type_k (F16)", p.type_k, GGML_TYPE_F16);
  checks.expect_eq("context.type_v (F16)", p.type_v, GGML_TYPE_F16);
  checks.expect_true("context.abort_callback == NULL", p.abort_callback == nullptr);
  checks.expect_true("context.embeddings false", !p.embeddings);
  checks.expect_true("context.offload_kqv true", p.offload_kqv);
  checks.expect_true("context.no_perf true", p.no_perf);
  checks.expect_true("context.op_offload true", p.op_offload);
  checks.expect_true("context.swa_full true", p.swa_full);
  checks.expect_true("context.kv_unified false", !p.kv_unified);
  checks.expect_true("context.samplers == NULL", p.samplers == nullptr);
  checks.expect_eq("context.n_samplers", p.n_samplers, size_t{0});
  checks.expect_true("context.ctx_other == NULL", p.ctx_other == nullptr);
}

// Defaults of llama_model_quantize_default_params (src/llama-quant.cpp).
void check_quantize_defaults(const LlamaApi& api, Checks& checks) {
  const llama_model_quantize_params p = api.model_quantize_default_params();
  checks.expect_eq("quantize.nthread", p.nthread, 0);
  checks.expect_eq("quantize.ftype (MOSTLY_Q8_0)", p.ftype, 7);
  checks.expect_eq("quantize.output_tensor_type (COUNT)", p.output_tensor_type, GGML_TYPE_COUNT);
  checks.expect_eq("quantize.token_embedding_type (COUNT)", p.token_embedding_type, GGML_TYPE_COUNT);
  checks.expect_true("quantize.allow_requantize false", !p.allow_requantize);
  checks.expect_true("quantize.quantize_output_tensor true", p.quantize_output_tensor);
  checks.expect_true("quantize.only_copy false", !p.only_copy);
  checks.expect_true("quantize.pure false", !p.pure);
  checks.expect_true("quantize.keep_split false", !p.keep_split);
  checks.expect_true("quantize.dry_run false", !p.dry_run);
  checks.expect_true("quantize.imatrix == NULL", p.imatrix == nullptr);
  checks.expect_true("quantize.kv_overrides == NULL", p.kv_overrides == nullptr);
  checks.expect_true("quantize.tt_overrides == NULL", p.tt_overrides == nullptr);
  checks.expect_true("quantize.prune_layers == NULL", p.prune_layers == nullptr);
  checks.expect_eq("quantize.max_buf_size (8 GiB)", p.max_buf_size, size_t{8} << 30);
}

// ggml_type_traits is read by dequant; Q8_0 is 32 elements in 34 bytes.
void check_type_traits(const LlamaApi& api, Checks& checks) {
  constexpr int32_t kQ8_0 = 8;
  const ggml_type_traits* q8 = api.get_type_traits(kQ8_0);
  checks.expect_true("ggml q8_0 traits present", q8 != nullptr);
  if (q8 == nullptr) return;
  checks.expect_true("ggml q8_0 type_name",
                     q8->type_name != nullptr && std::strcmp(q8->type_name, "q8_0") == 0);
  checks.expect_eq("ggml q8_0 blck_size", q8->blck_size, int64_t{32});
  checks.expect_eq("ggml q8_0 type_size", q8->type_size, size_t{34});
  checks.expect_true("ggml q8_0 is_quantized", q8->is_quantized);
  checks.expect_true("ggml q8_0 to_float present", q8->to_float != nullptr);
  const ggml_type_traits* f16 = api.get_type_traits(GGML_TYPE_F16);
  checks.expect_true("ggml f16 type_size 2", f16 != nullptr && f16->type_size == 2);
}

}  // namespace

Action setup_selftest(CLI::App& sub, const PeerOptions& options) {
  return [&options] {
    const LlamaApi api = start_peer(options);
    Checks checks;
    checks.expect_true("ggml backend devices >= 1", api.backend_dev_count() >= 1);
    check_model_defaults(api, checks);
    check_context_defaults(api, checks);
    check_quantize_defaults(api, checks);
    check_type_traits(api, checks);
    std::puts(checks.all_passed() ? "ok" : "FAILED");
    return checks.all_passed() ? kExitOk : kExitFailed;
  };
}

}  // namespace synapse::peer
