// Model shapes: the presets (real models' config.json values), how a preset
// maps onto another architecture, and the --n-* overrides.
#include <algorithm>
#include <string>

#include "synapse/error.h"
#include "synth/synth_arch.h"
#include "synth/synth_names.h"

namespace synapse::synth {

namespace {

struct Preset {
  const char* name;
  const char* arch;          // the real model's architecture; null: none (tiny)
  const char* vocab_family;  // its tokenizer family when used with that arch; null: arch default
  uint32_t n_layer, n_embd, n_head, n_head_kv;
  // Qwen3 sets head_dim apart from n_embd / n_head (0: n_embd / n_head). It
  // holds only on architectures whose files say so (attention.key_length).
  uint32_t head_dim;
  // A dense model stores n_ff, a MoE model n_ff_expert; the other is 0 and
  // derived so that a token's active FFN width stays the same:
  // n_ff = n_ff_expert * n_expert_used.
  uint32_t n_ff, n_ff_expert;
  uint32_t n_expert, n_expert_used;  // 0 for dense models: MoE arches then use 8 / 2
  uint32_t n_vocab, n_ctx;
  float rope_theta, rms_eps;
  bool tied;
  bool llama3_rope;  // Llama 3.1+ rope scaling (factor 32, low 1, high 4, original ctx 8192)
};

constexpr uint32_t kDefaultExperts = 8;
constexpr uint32_t kDefaultExpertsUsed = 2;

// clang-format off
constexpr Preset kPresets[] = {
//  name             arch        vocab     layer embd  head kv  hd   ff    ff_exp exp  used vocab   ctx     theta     eps    tied   llama3
  {"tiny",          nullptr,    nullptr,  2,    256,  4,   2,  0,   512,  0,     4,   2,   512,    2048,   10000.f,  1e-5f, true,  false},
  {"smollm2-135m",  "llama",    "smollm", 30,   576,  9,   3,  0,   1536, 0,     0,   0,   49152,  8192,   100000.f, 1e-5f, true,  false},
  {"qwen2.5-0.5b",  "qwen2",    nullptr,  24,   896,  14,  2,  0,   4864, 0,     0,   0,   151936, 32768,  1e6f,     1e-6f, true,  false},
  {"llama-3.2-1b",  "llama",    nullptr,  16,   2048, 32,  8,  0,   8192, 0,     0,   0,   128256, 131072, 500000.f, 1e-5f, true,  true},
  {"olmoe-1b-7b",   "olmoe",    nullptr,  16,   2048, 16,  16, 0,   0,    1024,  64,  8,   50304,  4096,   10000.f,  1e-5f, false, false},
  {"qwen3-30b-a3b", "qwen3moe", nullptr,  48,   2048, 32,  4,  128, 0,    768,   128, 8,   151936, 40960,  1e6f,     1e-6f, false, false},
};
// clang-format on

const Preset& find_preset(const std::string& name) {
  const std::string wanted = name.empty() ? "tiny" : name;
  for (const Preset& p : kPresets)
    if (wanted == p.name) return p;
  throw_unknown("preset", wanted, preset_names());
}

[[noreturn]] void bad_shape(const std::string& why) {
  throw Error(ErrorKind::Usage, "inconsistent shape: " + why);
}

// The preset's shape as it maps onto `arch`.
SynthShape shape_for_arch(const Preset& p, const ArchSpec& arch) {
  SynthShape s;
  s.preset = p.name;
  s.n_layer = p.n_layer;
  s.n_embd = p.n_embd;
  s.n_head = p.n_head;
  s.n_head_kv = arch.kv_heads_equal_heads ? p.n_head : p.n_head_kv;
  s.head_dim = arch.head_dim_keys ? p.head_dim : 0;
  s.n_vocab = p.n_vocab;
  s.n_ctx = p.n_ctx;
  s.rope_theta = p.rope_theta;
  s.rms_eps = p.rms_eps;
  s.tied = p.tied && arch.can_tie;
  s.llama3_rope = p.llama3_rope && arch.rope_freqs;
  const bool own_arch = p.arch != nullptr && std::string(p.arch) == arch.name;
  s.vocab_family = own_arch && p.vocab_family ? p.vocab_family : arch.vocab_family;
  if (arch.moe) {
    s.n_expert = p.n_expert ? p.n_expert : kDefaultExperts;
    s.n_expert_used = p.n_expert_used ? p.n_expert_used : kDefaultExpertsUsed;
    s.n_ff = p.n_ff_expert ? p.n_ff_expert : p.n_ff / s.n_expert_used;
  } else {
    s.n_ff = p.n_ff ? p.n_ff : p.n_ff_expert * p.n_expert_used;
  }
  return s;
}

void apply_overrides(const SynthOptions& o, const ArchSpec& arch, SynthShape& s) {
  if (!arch.moe && (o.n_expert || o.n_expert_used))
    throw Error(ErrorKind::Usage, std::string("--n-expert/--n-expert-used apply to MoE "
                                              "architectures only, not to ") +
                                      arch.name);
  auto take = [](const std::optional<uint32_t>& v, uint32_t& field) {
    if (v) field = *v;
  };
  take(o.n_layer, s.n_layer);
  take(o.n_embd, s.n_embd);
  take(o.n_head, s.n_head);
  take(o.n_head_kv, s.n_head_kv);
  take(o.head_dim, s.head_dim);
  take(o.n_ff, s.n_ff);
  take(o.n_vocab, s.n_vocab);
  take(o.n_expert, s.n_expert);
  take(o.n_expert_used, s.n_expert_used);
  take(o.n_ctx, s.n_ctx);
  // olmoe's k is as wide as q: an overridden head count carries kv heads along.
  if (arch.kv_heads_equal_heads && !o.n_head_kv) s.n_head_kv = s.n_head;
}

void check_shape(const ArchSpec& arch, SynthShape& s) {
  const struct {
    const char* flag;
    uint32_t value;
  } positive[] = {{"--n-layer", s.n_layer},     {"--n-embd", s.n_embd}, {"--n-head", s.n_head},
                  {"--n-head-kv", s.n_head_kv}, {"--n-ff", s.n_ff},     {"--n-vocab", s.n_vocab},
                  {"--n-ctx", s.n_ctx}};
  for (const auto& p : positive)
    if (p.value == 0) bad_shape(std::string(p.flag) + " must be positive");
  const bool own_head_dim = s.head_dim != 0;
  if (own_head_dim && !arch.head_dim_keys && s.head_dim * s.n_head != s.n_embd)
    bad_shape("--head-dim " + std::to_string(s.head_dim) + " times n_head must be n_embd on " + arch.name +
              " (its files cannot state a head dimension of their own)");
  if (!own_head_dim && s.n_embd % s.n_head != 0)
    bad_shape("n_embd " + std::to_string(s.n_embd) + " is not a multiple of n_head " +
              std::to_string(s.n_head));
  if (!own_head_dim) s.head_dim = s.n_embd / s.n_head;
  if (s.head_dim % 2 != 0)
    bad_shape("head dimension " + std::to_string(s.head_dim) + " must be even for RoPE");
  if (s.n_head % s.n_head_kv != 0)
    bad_shape("n_head " + std::to_string(s.n_head) + " is not a multiple of n_head_kv " +
              std::to_string(s.n_head_kv));
  if (arch.kv_heads_equal_heads && s.n_head_kv != s.n_head)
    bad_shape(std::string(arch.name) +
              " needs n_head_kv == n_head (llama.cpp sizes attn_k_norm "
              "as n_embd)");
  if (arch.moe && (s.n_expert == 0 || s.n_expert_used == 0 || s.n_expert_used > s.n_expert))
    bad_shape("needs 1 <= n_expert_used <= n_expert, got " + std::to_string(s.n_expert_used) +
              " of " + std::to_string(s.n_expert));
}

// The scaling llama.cpp builds from rope.scaling.* keys: a factor for
// linear and yarn, an original context for yarn only.
void check_rope_scaling(const SynthRopeScaling& r) {
  const std::vector<std::string> types = {"none", "linear", "yarn"};
  if (!r.type.empty() && std::find(types.begin(), types.end(), r.type) == types.end())
    throw_unknown("rope scaling", r.type, types);
  const bool scaled = r.type == "linear" || r.type == "yarn";
  if (scaled && !(r.factor > 0))
    throw Error(ErrorKind::Usage, "--rope-scaling " + r.type + " needs a positive --rope-scale");
  if (!scaled && r.factor != 0)
    throw Error(ErrorKind::Usage, "--rope-scale needs --rope-scaling linear or yarn");
  if (r.original_context != 0 && r.type != "yarn")
    throw Error(ErrorKind::Usage, "--rope-orig-ctx needs --rope-scaling yarn");
}

}  // namespace

const ArchSpec& resolve_arch(const SynthOptions& opts) {
  std::string name = opts.arch;
  if (name.empty()) {
    const Preset& p = find_preset(opts.preset);
    name = p.arch ? p.arch : "llama";
  }
  if (const ArchSpec* a = find_arch(name)) return *a;
  throw_unknown("architecture", name, arch_names());
}

SynthShape resolve_shape(const SynthOptions& opts, const ArchSpec& arch) {
  SynthShape s = shape_for_arch(find_preset(opts.preset), arch);
  apply_overrides(opts, arch, s);
  check_shape(arch, s);
  check_rope_scaling(opts.rope_scaling);
  s.rope_scaling = opts.rope_scaling;
  return s;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

}  // namespace synapse::synth
