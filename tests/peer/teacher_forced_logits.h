// Teacher-forced logits of both engines for the same token ids: ours from
// the synapse CLI, llama.cpp's from synapse-peer, and the tolerance each
// weight encoding allows between them. Both engines keep the KV cache in
// f32 and llama.cpp computes attention without flash attention, so that
// only the weights' encoding separates them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace synapse::test {

// Tolerances, measured on the PeerLogits files (2026-12-01, Xeon with
// AVX-512, llama.cpp's sapphirerapids CPU backend) and stated with a margin.
// max |delta logit| is relative to the peer's logit scale (the rows' root
// mean square, about 1 here: synth's output projection keeps unit scale);
// the mean KL(peer || ours) is in nats.
// - f32: both engines multiply in float; only summation order differs.
//   Measured max |d| 3.5e-5, KL 6e-12.
// - f16: which backend llama.cpp loads decides. sapphirerapids multiplies
//   in float as for f32 (max |d| 2.6e-5); zen4 (AMD EPYC, 2026-12-02)
//   rounds the activations to f16 first (ggml's vec_dot_type: 11
//   significant bits, an eighth of bf16's error), max |d| 0.0045, KL 3.1e-7.
//   The tolerance holds both. On olmoe that rounding flips one router
//   near-tie in 200 decode rows (max |d| 0.31, mean KL 1.1e-5), so the KL
//   bound is bf16's.
// - bf16: llama.cpp rounds the activations entering each product to bf16
//   (ggml's vec_dot_type; 8 significant bits, a relative error of up to
//   2^-9 per element). Measured max |d| 0.038, KL 2e-5.
// - q8_0, q4_0 (activations to Q8_0 blocks of 32) and the k-quants (Q8_K
//   blocks of 256): both engines quantize activations to 8 bits, with
//   different rounding and blocking. Each engine is ~0.12 from the scalar
//   reference (float activations) on qwen2.5 q8_0, so their difference can
//   reach twice that. Measured max |d| 0.14 (q4_k_m), KL 2.6e-4.
struct Tolerance {
  const char* type;
  float max_abs_diff;  // times the logit scale
  double mean_kl;
};
inline constexpr Tolerance kTolerances[] = {
    {"f32", 2e-4f, 1e-9}, {"f16", 0.02f, 1e-4},   {"bf16", 0.1f, 1e-4},  {"q8_0", 0.25f, 1e-3},
    {"q4_0", 0.25f, 1e-3}, {"q4_k_m", 0.25f, 1e-3}, {"q6_k", 0.25f, 1e-3},
};

// Throws std::invalid_argument for a type without a stated tolerance.
const Tolerance& tolerance_of(const std::string& type);

// `count` pseudo-random ids below `vocab` (splitmix64, so the sequence is the
// same with every standard library).
std::vector<std::string> token_ids(size_t count, uint32_t vocab, uint64_t seed);

// The ids as one space-separated argument.
std::string joined(const std::vector<std::string>& ids);

// How ours runs besides the settings both engines share; 0 leaves the CLI's
// default (the model's context up to 4096; one thread per core).
struct OurRun {
  size_t ctx = 0;
  unsigned threads = 0;
};

// Ours, in steps of `ubatch` tokens: every row, raw float32 through `dump`.
std::vector<float> our_logits(const std::string& model, const std::vector<std::string>& ids, size_t ubatch,
                              const std::string& dump, const OurRun& run = {});

// llama.cpp's, in batches of `batch` tokens, on one thread (its context:
// max(512, tokens)).
std::vector<float> peer_logits(const std::string& model, const std::vector<std::string>& ids, size_t batch,
                               const std::string& dump);

}  // namespace synapse::test
