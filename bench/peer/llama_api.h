// Our own declarations of the slice of the llama.cpp / ggml C API the peer
// harness uses, for exactly one version: the libraries of the npm package
// @node-llama-cpp/linux-x64@3.22.1 (llama.cpp build v0.5.0, ggml 0.25.1,
// source commit de3ff815ea7d559ee917f063901b8986f038abc6). Structs are passed
// by value across the C ABI, so they mirror that version's include/llama.h and
// ggml/include/ggml.h field for field; the static_asserts pin the sizes, and
// `synapse-peer selftest` checks the default values through this layout.
// Enums are C enums there (int-sized); we spell them as int32_t.
#pragma once

#include <cstddef>
#include <cstdint>

namespace synapse::peer {

using llama_token = int32_t;
using llama_pos = int32_t;
using llama_seq_id = int32_t;

// Opaque handles.
struct llama_model;
struct llama_context;
struct llama_vocab;
struct llama_memory_i;
using llama_memory_t = llama_memory_i*;

// enum llama_split_mode / llama_load_mode / llama_flash_attn_type (subset).
inline constexpr int32_t LLAMA_SPLIT_MODE_NONE = 0;
inline constexpr int32_t LLAMA_LOAD_MODE_AUTO = -1;
inline constexpr int32_t LLAMA_LOAD_MODE_MMAP = 1;
inline constexpr int32_t LLAMA_FLASH_ATTN_TYPE_AUTO = -1;
inline constexpr int32_t LLAMA_FLASH_ATTN_TYPE_DISABLED = 0;
inline constexpr int32_t LLAMA_FLASH_ATTN_TYPE_ENABLED = 1;
// enum ggml_type (subset).
inline constexpr int32_t GGML_TYPE_F32 = 0;
inline constexpr int32_t GGML_TYPE_F16 = 1;
inline constexpr int32_t GGML_TYPE_COUNT = 43;

// `level` is enum ggml_log_level.
using ggml_log_callback = void (*)(int32_t level, const char* text, void* user_data);

struct llama_model_params {
  void* devices;                      // ggml_backend_dev_t*, NULL-terminated
  const void* tensor_buft_overrides;  // const llama_model_tensor_buft_override*
  int32_t n_gpu_layers;
  int32_t split_mode;  // enum llama_split_mode
  int32_t load_mode;   // enum llama_load_mode (replaced use_mmap/use_mlock)
  int32_t lazy_mode;   // enum llama_lazy_mode
  int32_t main_gpu;
  const float* tensor_split;
  bool (*progress_callback)(float progress, void* user_data);
  void* progress_callback_user_data;
  const void* kv_overrides;  // const llama_model_kv_override*
  bool vocab_only;
  bool check_tensors;
  bool use_extra_bufts;
  bool no_host;
  bool no_alloc;
  bool load_mtp;
};
static_assert(sizeof(llama_model_params) == 80);

struct llama_context_params {
  uint32_t n_ctx;
  uint32_t n_batch;
  uint32_t n_ubatch;
  uint32_t n_seq_max;
  uint32_t n_rs_seq;
  uint32_t n_outputs_max;
  uint32_t n_outputs_max_per_seq;
  int32_t n_threads;
  int32_t n_threads_batch;
  int32_t ctx_type;           // enum llama_context_type
  int32_t rope_scaling_type;  // enum llama_rope_scaling_type
  int32_t pooling_type;       // enum llama_pooling_type
  int32_t attention_type;     // enum llama_attention_type
  int32_t flash_attn_type;    // enum llama_flash_attn_type
  float rope_freq_base;
  float rope_freq_scale;
  float yarn_ext_factor;
  float yarn_attn_factor;
  float yarn_beta_fast;
  float yarn_beta_slow;
  uint32_t yarn_orig_ctx;
  float defrag_thold;
  void* cb_eval;  // ggml_backend_sched_eval_callback
  void* cb_eval_user_data;
  int32_t type_k;        // enum ggml_type
  int32_t type_v;        // enum ggml_type
  void* abort_callback;  // ggml_abort_callback
  void* abort_callback_data;
  bool embeddings;
  bool offload_kqv;
  bool no_perf;
  bool op_offload;
  bool swa_full;
  bool kv_unified;
  void* samplers;  // llama_sampler_seq_config*
  size_t n_samplers;
  llama_context* ctx_other;
};
static_assert(sizeof(llama_context_params) == 160);

struct llama_batch {
  int32_t n_tokens;
  llama_token* token;
  float* embd;
  llama_pos* pos;
  int32_t* n_seq_id;
  llama_seq_id** seq_id;
  int8_t* logits;  // "output" flag per token
};
static_assert(sizeof(llama_batch) == 56);

// enum llama_model_kv_override_type.
inline constexpr int32_t LLAMA_KV_OVERRIDE_TYPE_INT = 0;
inline constexpr int32_t LLAMA_KV_OVERRIDE_TYPE_FLOAT = 1;
inline constexpr int32_t LLAMA_KV_OVERRIDE_TYPE_BOOL = 2;
inline constexpr int32_t LLAMA_KV_OVERRIDE_TYPE_STR = 3;

// An array of these ends with an entry whose key is empty.
struct llama_model_kv_override {
  int32_t tag;  // enum llama_model_kv_override_type
  char key[128];
  union {
    int64_t val_i64;
    double val_f64;
    bool val_bool;
    char val_str[128];
  };
};
static_assert(sizeof(llama_model_kv_override) == 264);

// One tensor's importance (llama-quantize's normalised imatrix row(s)); an
// array of these ends with {nullptr, nullptr, 0}.
struct llama_model_imatrix_data {
  const char* name;
  const float* data;
  size_t size;
};
static_assert(sizeof(llama_model_imatrix_data) == 24);

// One per-tensor type override (llama-quantize --tensor-type): tensors whose
// name the regular expression `pattern` is found in get `type`; an array of
// these ends with a null pattern.
struct llama_model_tensor_override {
  const char* pattern;
  int32_t type;  // enum ggml_type
};
static_assert(sizeof(llama_model_tensor_override) == 16);

struct llama_model_quantize_params {
  int32_t nthread;  // <= 0: std::thread::hardware_concurrency()
  int32_t ftype;    // enum llama_ftype
  int32_t output_tensor_type;    // enum ggml_type; GGML_TYPE_COUNT: the ftype's rule
  int32_t token_embedding_type;  // enum ggml_type; GGML_TYPE_COUNT: the ftype's rule
  bool allow_requantize;
  bool quantize_output_tensor;
  bool only_copy;
  bool pure;
  bool keep_split;
  bool dry_run;
  const llama_model_imatrix_data* imatrix;   // {NULL}-terminated
  const llama_model_kv_override* kv_overrides;  // ends with an empty key
  const llama_model_tensor_override* tt_overrides;  // {NULL}-terminated
  const int32_t* prune_layers;  // -1-terminated
  size_t max_buf_size;          // 0: 8 GiB
};
static_assert(sizeof(llama_model_quantize_params) == 64);

using ggml_to_float_t = void (*)(const void* x, float* y, int64_t k);
using ggml_from_float_t = void (*)(const float* x, void* y, int64_t k);

struct ggml_type_traits {
  const char* type_name;
  int64_t blck_size;
  int64_t blck_size_interleave;
  size_t type_size;
  bool is_quantized;
  ggml_to_float_t to_float;  // null for F32 (nothing to convert)
  ggml_from_float_t from_float_ref;
};

// Entry points, resolved by load_llama_api(); every one is non-null after it.
struct LlamaApi {
  // libllama
  llama_model_params (*model_default_params)();
  llama_context_params (*context_default_params)();
  void (*backend_init)();
  void (*log_set)(ggml_log_callback callback, void* user_data);
  const char* (*print_system_info)();
  llama_model* (*model_load_from_file)(const char* path, llama_model_params params);
  void (*model_free)(llama_model* model);
  const llama_vocab* (*model_get_vocab)(const llama_model* model);
  int32_t (*vocab_n_tokens)(const llama_vocab* vocab);
  llama_token (*vocab_bos)(const llama_vocab* vocab);
  bool (*vocab_get_add_bos)(const llama_vocab* vocab);
  llama_context* (*init_from_model)(llama_model* model, llama_context_params params);
  void (*free)(llama_context* ctx);
  llama_batch (*batch_init)(int32_t n_tokens, int32_t embd, int32_t n_seq_max);
  void (*batch_free)(llama_batch batch);
  int32_t (*decode)(llama_context* ctx, llama_batch batch);
  void (*synchronize)(llama_context* ctx);
  float* (*get_logits_ith)(llama_context* ctx, int32_t i);
  llama_memory_t (*get_memory)(const llama_context* ctx);
  void (*memory_clear)(llama_memory_t mem, bool data);
  int32_t (*tokenize)(const llama_vocab* vocab, const char* text, int32_t text_len,
                      llama_token* tokens, int32_t n_tokens_max, bool add_special,
                      bool parse_special);
  llama_model_quantize_params (*model_quantize_default_params)();
  // 0 on success.
  uint32_t (*model_quantize)(const char* fname_inp, const char* fname_out,
                             const llama_model_quantize_params* params);
  // libggml
  void (*backend_load_all_from_path)(const char* dir);
  void* (*backend_load)(const char* path);  // returns a ggml_backend_reg_t, null on failure
  size_t (*backend_dev_count)();
  // libggml-base
  const ggml_type_traits* (*get_type_traits)(int32_t type);
};

}  // namespace synapse::peer
